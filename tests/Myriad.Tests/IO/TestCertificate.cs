using System;
using System.Security.Cryptography;
using System.Security.Cryptography.X509Certificates;

namespace Myriad.Tests.IO;

internal static class TestCertificate
{
    /// <summary>A self-signed certificate for localhost, usable by SslStream as a server.</summary>
    internal static X509Certificate2 Create()
    {
        using var key = ECDsa.Create(ECCurve.NamedCurves.nistP256);
        var request = new CertificateRequest("CN=localhost", key, HashAlgorithmName.SHA256);
        using X509Certificate2 ephemeral = request.CreateSelfSigned(DateTimeOffset.UtcNow.AddMinutes(-5), DateTimeOffset.UtcNow.AddHours(1));
        return X509CertificateLoader.LoadPkcs12(ephemeral.Export(X509ContentType.Pfx), null);
    }
}
