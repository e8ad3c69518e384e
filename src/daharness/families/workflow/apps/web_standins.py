"""The harness's side of the web API stand-ins (`standins/webapis.py`, which runs in the sandbox): the
hosts they answer for, and the certificates and environment that send a sandbox's HTTP(S) through them.

A certificate authority is made once per harness process and its private key never leaves it; the
sandbox gets the authority's certificate (its programs trust it: SSL_CERT_FILE, REQUESTS_CA_BUNDLE,
CURL_CA_BUNDLE) and one server certificate with its key for the stand-in hosts, which the proxy
presents. Nothing outside the sandbox trusts either.
"""

from __future__ import annotations

import datetime
import importlib.util
from dataclasses import dataclass
from pathlib import Path

from daharness.sandbox.once import computed_once

WEBAPIS = Path(__file__).parent / "standins" / "webapis.py"
CERT_DIR = "/run/daharness-webapis"
CA_BUNDLE = f"{CERT_DIR}/ca.pem"
SERVER_PEM = f"{CERT_DIR}/server.pem"
# hosts the sandbox's own services use: never through the proxy
NO_PROXY = "localhost,127.0.0.1,::1,0.0.0.0,db,superset_db,postgres"


@computed_once
def standin_hosts() -> frozenset[str]:
    """The hosts `webapis.py` answers for (read from it, so that the two never disagree)."""
    spec = importlib.util.spec_from_file_location("daharness_webapis_standin", WEBAPIS)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return frozenset(module.APIS)


def proxy_env() -> dict[str, str]:
    proxy = "http://127.0.0.1:3128"
    env = {name: proxy for name in ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy")}
    env |= {"NO_PROXY": NO_PROXY, "no_proxy": NO_PROXY}
    env |= {name: CA_BUNDLE for name in ("SSL_CERT_FILE", "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE")}
    return env


@dataclass(frozen=True)
class Certificates:
    authority_pem: str
    server_pem: str  # certificate, then its private key

    def files(self) -> dict[str, str]:
        return {CA_BUNDLE: self.authority_pem, SERVER_PEM: self.server_pem}


@computed_once
def certificates() -> Certificates:
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

    usage = dict.fromkeys(("content_commitment", "key_encipherment", "data_encipherment", "key_agreement",
                           "encipher_only", "decipher_only"), False)  # fmt: skip
    authority_usage = x509.KeyUsage(digital_signature=True, key_cert_sign=True, crl_sign=True, **usage)
    now = datetime.datetime.now(datetime.UTC)
    lifetime = (now - datetime.timedelta(days=1), now + datetime.timedelta(days=30))

    def name(text: str) -> x509.Name:
        return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, text)])

    authority_key = ec.generate_private_key(ec.SECP256R1())
    authority = (
        x509.CertificateBuilder()
        .subject_name(name("daharness sandbox web stand-ins"))
        .issuer_name(name("daharness sandbox web stand-ins"))
        .public_key(authority_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(lifetime[0])
        .not_valid_after(lifetime[1])
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(authority_usage, critical=True)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(authority_key.public_key()), critical=False)
        .sign(authority_key, hashes.SHA256())
    )
    server_key = ec.generate_private_key(ec.SECP256R1())
    hosts = sorted(standin_hosts())
    server = (
        x509.CertificateBuilder()
        .subject_name(name(hosts[0]))
        .issuer_name(authority.subject)
        .public_key(server_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(lifetime[0])
        .not_valid_after(lifetime[1])
        .add_extension(x509.SubjectAlternativeName([x509.DNSName(host) for host in hosts]), critical=False)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(authority_key.public_key()), critical=False
        )
        .sign(authority_key, hashes.SHA256())
    )
    pem = serialization.Encoding.PEM
    key_pem = server_key.private_bytes(
        pem, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    ).decode()
    return Certificates(
        authority_pem=authority.public_bytes(pem).decode(),
        server_pem=server.public_bytes(pem).decode() + key_pem,
    )
