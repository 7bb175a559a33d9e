using System;
using Myriad.Compare;

// The NativeAOT child of the compare tool: the same protocol as `Myriad.Compare --child ...`.
if (args.Length > 0 && args[0] == ChildHost.Flag)
{
    return ChildHost.Run(args[1..]);
}

Console.Error.WriteLine("Myriad.Compare.Aot is the NativeAOT child of bench/Myriad.Compare; run that tool (its myriad-aot variants start this program).");
return 2;
