using Microsoft.CodeAnalysis;

namespace Myriad.Analyzers;

/// <summary>The diagnostics of the Myriad analyzers. Ids are stable: never reuse a retired one.</summary>
internal static class Descriptors
{
    private const string Usage = "Usage";
    private const string Performance = "Performance";

    /// <summary>MYR0001: a job nobody awaits or hands over.</summary>
    public static readonly DiagnosticDescriptor DroppedJob = new(
        id: "MYR0001",
        title: "A job is dropped",
        messageFormat: "{0}: its failure is lost and its pooled state is never recycled; await it, or hand it to a runtime's Detach (fire and forget: SpawnDetached)",
        category: Usage,
        defaultSeverity: DiagnosticSeverity.Warning,
        isEnabledByDefault: true,
        description: "A Job or Job<T> is a single-use handle that must be consumed exactly once: awaited, waited on, turned into a Task, or handed to JobRuntime.Detach. A dropped job's exception is never observed and its pooled box never returns to its pool.");

    /// <summary>MYR0002: a job consumed twice.</summary>
    public static readonly DiagnosticDescriptor DoubleConsumption = new(
        id: "MYR0002",
        title: "A job is consumed twice",
        messageFormat: "Job '{0}' may already have been consumed here ({1}); a job is single-use: use AsTask() once and share the Task",
        category: Usage,
        defaultSeverity: DiagnosticSeverity.Warning,
        isEnabledByDefault: true,
        description: "Like a ValueTask, a job may be awaited, waited on or converted only once; its pooled state may already belong to another job afterwards, and the second consumption throws InvalidOperationException.");

    /// <summary>MYR0003: a blocking wait inside an async job.</summary>
    public static readonly DiagnosticDescriptor BlockingInAsyncJob = new(
        id: "MYR0003",
        title: "Blocking wait inside an async Job method",
        messageFormat: "'{0}' blocks the thread inside an async Job method; await instead",
        category: Usage,
        defaultSeverity: DiagnosticSeverity.Warning,
        isEnabledByDefault: true,
        description: "An async Job method runs on a runtime's worker or on the thread that completed what it awaited. Blocking there holds a worker that other jobs need and can deadlock a single-threaded runtime.");

    /// <summary>MYR0004: a capturing lambda where a typed-state form exists.</summary>
    public static readonly DiagnosticDescriptor CapturingLambda = new(
        id: "MYR0004",
        title: "Pass state instead of capturing it",
        messageFormat: "{0}",
        category: Performance,
        defaultSeverity: DiagnosticSeverity.Info,
        isEnabledByDefault: true,
        description: "A lambda that captures variables allocates a closure and a delegate on every call. Myriad's typed-state forms (Spawn(state, static s => ...)) carry the state without either.");

    /// <summary>MYR0005: a synchronous spawn body that drops the task it makes.</summary>
    public static readonly DiagnosticDescriptor DiscardedAwaitable = new(
        id: "MYR0005",
        title: "A synchronous job body drops a task",
        messageFormat: "This lambda is a synchronous body ({0}), so the job does not wait for the {1} that '{2}' returns and its failure is lost; make the lambda async and await the call (async () => await Call(), or async s => await Call(s) with typed state)",
        category: Usage,
        defaultSeverity: DiagnosticSeverity.Warning,
        isEnabledByDefault: true,
        description: "Spawn, SpawnDetached and Run take an Action for a synchronous body. A lambda whose body is a call that returns a Task, a ValueTask or a job that matches no job form (a Job? from ?., a Job<T> passed to SpawnDetached) converts to that Action silently, and the job ends as soon as the call returns: the task runs on unobserved. Task.Run takes such a lambda as a Func<Task> and waits for it; with Myriad, write an async lambda.");
}
