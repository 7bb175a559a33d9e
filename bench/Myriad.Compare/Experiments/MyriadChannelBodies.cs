namespace Myriad.Compare.Experiments;

/// <summary>
/// Where the myriad variants of the channel experiments come from. Until Myriad's channels land on
/// main, <c>MyriadChannels.cs</c> is left out of the build and these variants are reported as pending.
/// </summary>
internal static partial class MyriadChannelBodies
{
    public static Body? Find(string experimentClass)
    {
        Body? body = null;
        Lookup(experimentClass, ref body);
        return body;
    }

    /// <summary>Implemented in MyriadChannels.cs once it is compiled; otherwise the call is removed.</summary>
    static partial void Lookup(string experimentClass, ref Body? body);
}
