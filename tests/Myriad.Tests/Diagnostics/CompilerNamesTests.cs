using System;
using System.Reflection;
using System.Runtime.CompilerServices;
using Myriad.Diagnostics;
using Xunit;

namespace Myriad.Tests.Diagnostics;

public class CompilerNamesTests
{
    [Theory]
    [InlineData("Run", "Run")]
    [InlineData("<Main>g__Local|0_0", "Main.Local")]
    [InlineData("<<Main>$>g__Local|0_2", "Main.Local")]
    [InlineData("<Run>b__2_1", "lambda in Run")]
    [InlineData("<<Main>$>b__4", "lambda in Main")]
    [InlineData("<<Run>g__Outer|0_0>b__1", "lambda in Run.Outer")]
    [InlineData("<<Run>b__0>b__1", "lambda in Run")]
    [InlineData("<broken", "<broken")]
    public void DescribeMethod_CompilerGeneratedName_IsReadable(string name, string expected) =>
        Assert.Equal(expected, CompilerNames.DescribeMethod(name));

    private static async Job<int> Plain() => await Job.FromResult(1);

    [Fact]
    public void DescribeStateMachine_OfMethod_IsTypeDotMethod() =>
        Assert.Equal("CompilerNamesTests.Plain", CompilerNames.DescribeStateMachine(StateMachineOf(Plain)));

    [Fact]
    public void DescribeStateMachine_OfLocalFunction_IsTypeDotMethodDotLocal()
    {
        static async Job<int> Local() => await Job.FromResult(2);

        Assert.Equal("CompilerNamesTests.DescribeStateMachine_OfLocalFunction_IsTypeDotMethodDotLocal.Local", CompilerNames.DescribeStateMachine(StateMachineOf(Local)));
    }

    [Fact]
    public void DescribeStateMachine_OfLambda_IsLambdaInTypeDotMethod()
    {
        Func<Job<int>> lambda = static async () => await Job.FromResult(3);

        Assert.Equal("lambda in CompilerNamesTests.DescribeStateMachine_OfLambda_IsLambdaInTypeDotMethod", CompilerNames.DescribeStateMachine(StateMachineOf(lambda)));
    }

    [Fact]
    public void PublicNames_EveryKey_IsTheNameOfOneOfMyriadsOwnAsyncMethods()
    {
        var helpers = new System.Collections.Generic.HashSet<string>();
        foreach (Type type in typeof(Job).Assembly.GetTypes())
        {
            if (typeof(IAsyncStateMachine).IsAssignableFrom(type))
            {
                helpers.Add(CompilerNames.QualifiedStateMachineName(type));
            }
        }

        Assert.All(CompilerNames.PublicNames.Keys, key => Assert.Contains(key, helpers));
    }

    [Theory]
    [InlineData(typeof(int), "Int32")]
    [InlineData(typeof(System.Collections.Generic.List<string>), "List<String>")]
    [InlineData(typeof((int, Job)), "(Int32, Job)")]
    [InlineData(typeof(System.Collections.Generic.Dictionary<string, (int, long)>), "Dictionary<String, (Int32, Int64)>")]
    [InlineData(typeof(int[]), "Int32[]")]
    [InlineData(typeof(int[,]), "Int32[,]")]
    [InlineData(typeof(int?), "Int32?")]
    public void DescribeType_Type_ReadsAsCSharp(Type type, string expected) =>
        Assert.Equal(expected, CompilerNames.DescribeType(type));

    private static Type StateMachineOf(Delegate method) =>
        method.Method.GetCustomAttribute<AsyncStateMachineAttribute>()!.StateMachineType;
}
