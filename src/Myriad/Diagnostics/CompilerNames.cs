using System;

namespace Myriad.Diagnostics;

/// <summary>
/// Turns the names the C# compiler gives to async state machines, local functions and lambdas into
/// names a person reads in a dump. Works on names alone (<c>Type.Name</c>,
/// <c>MethodInfo.Name</c>), which survive trimming and NativeAOT.
/// </summary>
/// <remarks>
/// The compiler's names (Roslyn's GeneratedNames, stable for years but not a contract):
/// <list type="bullet">
/// <item><c>&lt;Run&gt;d__3</c>: the state machine of method <c>Run</c> (a generic arity suffix such as
/// <c>`1</c> may follow);</item>
/// <item><c>&lt;Run&gt;g__Local|0_0</c>: local function <c>Local</c> declared in <c>Run</c>;</item>
/// <item><c>&lt;Run&gt;b__2_1</c> or <c>&lt;Run&gt;b__2</c>: a lambda declared in <c>Run</c>;</item>
/// <item><c>&lt;Main&gt;$</c>: the entry point generated for top-level statements;</item>
/// <item><c>&lt;&gt;c</c>, <c>&lt;&gt;c__DisplayClass0_0</c>: the classes that hold lambdas and their captures.</item>
/// </list>
/// These nest: the state machine of a local function of top-level code is
/// <c>&lt;&lt;&lt;Main&gt;$&gt;g__Local|0_2&gt;d</c>. A name that does not parse is returned as it is.
/// </remarks>
internal static class CompilerNames
{
    /// <summary>"Declaring.Method" for an async state machine type: <c>Program.Main.Local</c>, <c>lambda in C.Run</c>.</summary>
    internal static string DescribeStateMachine(Type type)
    {
        string name = QualifiedStateMachineName(type);
        return type.Assembly == typeof(CompilerNames).Assembly ? PublicNameOf(name) : name;
    }

    /// <summary><see cref="DescribeStateMachine"/> before a helper of Myriad's own is renamed to its public operation.</summary>
    internal static string QualifiedStateMachineName(Type type)
    {
        string method = StripArity(type.Name);
        if (TrySplit(method, out string inner, out string suffix) && (suffix.StartsWith("d__", StringComparison.Ordinal) || suffix == "d"))
        {
            method = inner;
        }

        string? declaring = DeclaringTypeName(type.DeclaringType);
        return Qualify(declaring, method);
    }

    /// <summary>
    /// The public operation behind one of Myriad's own async methods, for a dump that names what the
    /// user called rather than a helper (<c>Job.WhenAll</c>, not <c>Job.WhenAllCore</c>). Keys are
    /// what <see cref="Qualify"/> makes of the helpers' compiler names; a helper not listed keeps its
    /// own name, and CompilerNamesTests checks that every key still matches a helper.
    /// </summary>
    internal static string PublicNameOf(string helper) => PublicNames.TryGetValue(helper, out string? name) ? name : helper;

    /// <summary>Myriad's own async helpers (keys, as <see cref="QualifiedStateMachineName"/> gives them) and the public operation each runs for.</summary>
    internal static readonly System.Collections.Generic.IReadOnlyDictionary<string, string> PublicNames = new System.Collections.Generic.Dictionary<string, string>(StringComparer.Ordinal)
    {
        ["Adapters.Discard"] = "Job<T>.AsJob",
        ["Adapters.Forward"] = "Job.AsValueTask",
        ["Adapters.ConsumeForTask"] = "Job.AsTask",
        ["Job.WhenAllCore"] = "Job.WhenAll",
        ["Chan.SendAllAsync.SendAllCoreAsync"] = "Chan<T>.SendAllAsync",
        ["ScopeCore.SpawnAsync.SpawnAfterSlotAsync"] = "JobScope.SpawnAsync",
        ["ScopeCore.WaitAsync.WaitSlowAsync"] = "JobScope.WaitAsync",
        ["ScopeCore.DisposeAsync"] = "JobScope.DisposeAsync",
        ["ScopeCore.NextAsync"] = "JobScope<T> enumeration",
        ["JobTcpListener.AcceptBcl"] = "JobTcpListener.AcceptAsync",
        ["JobTcpStream.ReadAsync.ReadOrWrap"] = "JobTcpConnection.AsStream().ReadAsync",
        ["JobTcpStream.WriteAsync.WriteOrWrap"] = "JobTcpConnection.AsStream().WriteAsync",
        ["JobTcpConnection.AwaitRead"] = "JobTcpConnection.ReadAsync",
        ["JobTcpConnection.AwaitWrite"] = "JobTcpConnection.WriteAsync",
        ["JobTcpConnection.ConnectBcl"] = "JobTcpConnection.ConnectAsync",
    };

    /// <summary>
    /// A type as C# writes it, for messages and dumps: <c>Int32</c>, <c>List&lt;String&gt;</c>,
    /// <c>(Int32, Job)</c> for a value tuple, <c>Int32[]</c>.
    /// </summary>
    internal static string DescribeType(Type type)
    {
        if (type.IsArray)
        {
            return $"{DescribeType(type.GetElementType()!)}[{new string(',', type.GetArrayRank() - 1)}]";
        }

        if (!type.IsGenericType || type.IsGenericTypeDefinition)
        {
            return StripArity(type.Name);
        }

        if (Nullable.GetUnderlyingType(type) is { } underlying)
        {
            return $"{DescribeType(underlying)}?";
        }

        Type[] arguments = type.GetGenericArguments();
        string joined = string.Join(", ", Array.ConvertAll(arguments, DescribeType));
        if (type.Name.StartsWith("ValueTuple`", StringComparison.Ordinal) && type.Namespace == "System" && arguments.Length > 1)
        {
            return $"({joined})";
        }

        return $"{StripArity(type.Name)}<{joined}>";
    }

    /// <summary>A delegate's method name, readable: <c>Run</c>, <c>Main.Local</c>, <c>lambda in Run</c>.</summary>
    internal static string DescribeMethod(string name) => Qualify(null, name);

    /// <summary>Joins a declaring type and a (possibly compiler-generated) method name.</summary>
    private static string Qualify(string? declaring, string method)
    {
        string path = MethodPath(method, out bool lambda);
        string qualified = declaring is null ? path : $"{declaring}.{path}";
        return lambda ? $"lambda in {qualified}" : qualified;
    }

    /// <summary>"Outer.Local" for a local function, "Outer" with <paramref name="lambda"/> set for a lambda.</summary>
    private static string MethodPath(string name, out bool lambda)
    {
        lambda = false;
        if (!TrySplit(name, out string outer, out string suffix))
        {
            return name;
        }

        string outerPath = MethodPath(outer, out bool outerLambda);
        if (outerLambda)
        {
            outerPath = $"lambda in {outerPath}";
        }

        if (suffix == "$")
        {
            return outerPath; // <Main>$: top-level statements
        }

        if (suffix.StartsWith("g__", StringComparison.Ordinal))
        {
            int bar = suffix.IndexOf('|');
            string local = bar > 3 ? suffix.Substring(3, bar - 3) : suffix.Substring(3);
            return $"{outerPath}.{local}";
        }

        if (suffix.StartsWith("b__", StringComparison.Ordinal))
        {
            lambda = !outerLambda; // a lambda in a lambda reads as the outer one
            return outerPath;
        }

        return name;
    }

    /// <summary>Splits "&lt;inner&gt;suffix", matching nested angle brackets.</summary>
    private static bool TrySplit(string name, out string inner, out string suffix)
    {
        inner = suffix = string.Empty;
        if (name.Length < 2 || name[0] != '<')
        {
            return false;
        }

        int depth = 0;
        for (int i = 0; i < name.Length; i++)
        {
            if (name[i] == '<')
            {
                depth++;
            }
            else if (name[i] == '>' && --depth == 0)
            {
                inner = name.Substring(1, i - 1);
                suffix = name.Substring(i + 1);
                return inner.Length > 0;
            }
        }

        return false;
    }

    /// <summary>The nearest declaring type the user wrote (skipping <c>&lt;&gt;c</c> and display classes), without its arity.</summary>
    private static string? DeclaringTypeName(Type? type)
    {
        while (type is not null && type.Name.StartsWith('<'))
        {
            type = type.DeclaringType;
        }

        return type is null ? null : StripArity(type.Name);
    }

    private static string StripArity(string name)
    {
        int tick = name.IndexOf('`');
        return tick > 0 ? name.Substring(0, tick) : name;
    }
}
