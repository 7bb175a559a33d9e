using System;
using System.Runtime.InteropServices;

namespace Myriad.Tests.Support;

/// <summary>Object sizes, for the tests that keep the footprint of pending work from growing unnoticed.</summary>
internal static class ObjectLayout
{
    /// <summary>
    /// The bytes one instance of <paramref name="type"/> takes on the GC heap (header and method-table
    /// pointer included): CoreCLR's base size, the second 32-bit field of the method table.
    /// </summary>
    internal static int InstanceSize(Type type)
    {
        if (!type.IsClass || type.IsArray || type == typeof(string) || type.ContainsGenericParameters)
        {
            throw new ArgumentException("A closed, fixed-size class is expected.", nameof(type));
        }

        return Marshal.ReadInt32(type.TypeHandle.Value, 4);
    }
}
