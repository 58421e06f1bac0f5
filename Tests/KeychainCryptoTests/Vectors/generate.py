#!/usr/bin/env python3
"""Writes the KeychainCrypto known-answer vectors from an independent implementation of the formats
(Python's hashlib and the `cryptography` package), following docs/decisions/0021 byte for byte.

Run from this directory: python3 generate.py. The Swift tests read the JSON files; regenerate only
when a format deliberately changes (which also means a new format version)."""
import hashlib, hmac, json, struct, unicodedata
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

def hx(b): return b.hex()
def seq(n, start=0): return bytes((start + i) % 256 for i in range(n))
def u32(n): return struct.pack(">I", n)
def lp(b): return u32(len(b)) + b

def hkdf(ikm, info, length=32):
    prk = hmac.new(b"", ikm, hashlib.sha256).digest()
    out, block, counter = b"", b"", 1
    while len(out) < length:
        block = hmac.new(prk, block + info + bytes([counter]), hashlib.sha256).digest()
        out += block
        counter += 1
    return out[:length]

LABELS = {
    "zoneState": b"synckeychain/v1/zone-state",
    "deviceLog": b"synckeychain/v1/device-log",
    "auth": b"synckeychain/v1/auth",
    "wrap": b"synckeychain/v1/wrap",
    "recoveryWrap": b"synckeychain/v1/recovery-wrap",
    "recoveryAuth": b"synckeychain/v1/recovery-auth",
    "itemID": b"synckeychain/v1/item-id",
    "itemBlob": b"synckeychain/v1/item-blob",
    "epochChain": b"synckeychain/v1/epoch-chain",
    "recoveryAgreement": b"synckeychain/v1/recovery-agreement",
    "identitySigning": b"synckeychain/v1/identity-signing",
    "identityAgreement": b"synckeychain/v1/identity-agreement",
    "groupChain": b"synckeychain/v1/group-chain",
}

def scrypt(password, salt, log_n, r, p, dklen):
    return hashlib.scrypt(password, salt=salt, n=1 << log_n, r=r, p=p, dklen=dklen, maxmem=1 << 30)

def params_json(log_n, r, p, salt):
    return {"algorithm": "scrypt", "logN": log_n, "r": r, "p": p, "salt": hx(salt)}

def params_encoding(log_n, r, p, salt):
    return lp(b"scrypt") + bytes([log_n]) + u32(r) + u32(p) + lp(salt)

def write(name, value):
    with open(name, "w") as f:
        json.dump(value, f, indent=2)
        f.write("\n")

# scrypt: RFC 7914 section 12 (the 2^20 one left out for time), then the default parameters.
scrypt_vectors = [
    {"password": "", "salt": "", "logN": 4, "r": 1, "p": 1, "outputByteCount": 64},
    {"password": "password", "salt": hx(b"NaCl"), "logN": 10, "r": 8, "p": 16, "outputByteCount": 64},
    {"password": "pleaseletmein", "salt": hx(b"SodiumChloride"), "logN": 14, "r": 8, "p": 1, "outputByteCount": 64},
    {"password": "correct horse battery staple", "salt": hx(seq(16)), "logN": 17, "r": 8, "p": 1, "outputByteCount": 32},
]
rfc7914 = [
    "77d6576238657b203b19ca42c18a0497f16b4844e3074ae8dfdffa3fede21442fcd0069ded0948f8326a753a0fc81f17e8d3e0fb2e0d3628cf35e20c38d18906",
    "fdbabe1c9d3472007856e7190d01e9fe7c6ad7cbc8237830e77376634b3731622eaf30d92e22a3886ff109279d9830dac727afb94a83ee6d8360cbdfa2cc0640",
    "7023bdcb3afd7348461c06cd81fd38ebfda8fbba904f8e3ea9b543f6545da1f2d5432955613f0fcf62d49705242a9af9e61e85dc0d651e40dfcf017b45575887",
]
for v in scrypt_vectors:
    v["output"] = hx(scrypt(v["password"].encode(), bytes.fromhex(v["salt"]), v["logN"], v["r"], v["p"], v["outputByteCount"]))
for v, expected in zip(scrypt_vectors, rfc7914):
    assert v["output"] == expected
write("scrypt.json", scrypt_vectors)

# Every HKDF label, and full password derivations (the second password is not NFC: "é" decomposed).
labels = [{"purpose": k, "label": l.decode(), "inputKeyMaterial": hx(seq(32, 0x40)), "output": hx(hkdf(seq(32, 0x40), l))}
          for k, l in LABELS.items()]
secrets = []
for password, log_n, salt in [("hunter2", 15, seq(16, 0x10)), ("caf\u0065\u0301 \u00fc", 15, seq(24, 0x80))]:
    normalized = unicodedata.normalize("NFC", password).encode()
    master = scrypt(normalized, salt, log_n, 8, 1, 32)
    secrets.append({"password": password, "parameters": params_json(log_n, 8, 1, salt), "masterSecret": hx(master),
                    "authKey": hx(hkdf(master, LABELS["auth"])), "wrappingKey": hx(hkdf(master, LABELS["wrap"]))})
write("derivations.json", {"labels": labels, "accountSecrets": secrets})

# Wrapped account keys.
def b32(data):
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"
    bits = "".join(f"{b:08b}" for b in data)
    chars = "".join(alphabet[int(bits[i:i + 5], 2)] for i in range(0, len(bits), 5))
    return "-".join(chars[i:i + 4] for i in range(0, len(chars), 4))

account_key = seq(32, 0xa0)
master = bytes.fromhex(secrets[0]["masterSecret"])
p = secrets[0]["parameters"]
salt = bytes.fromhex(p["salt"])
wrapping_key = hkdf(master, LABELS["wrap"])
nonce = seq(12, 0x01)
account, epoch = "alice@example.com", 3
ad = bytes([1, 1]) + lp(account.encode()) + u32(epoch) + lp(params_encoding(15, 8, 1, salt))
password_wrap = bytes([1]) + nonce + AESGCM(wrapping_key).encrypt(nonce, account_key, ad)
recovery_key = seq(32, 0x33)
recovery_check = hashlib.sha256(b"synckeychain/v1/recovery-check" + recovery_key).digest()[:3]
recovery_nonce = seq(12, 0x77)
recovery_ad = bytes([1, 2]) + lp(account.encode()) + u32(epoch)
recovery_wrap = bytes([1]) + recovery_nonce + AESGCM(hkdf(recovery_key, LABELS["recoveryWrap"])).encrypt(recovery_nonce, account_key, recovery_ad)
write("account-key.json", {
    "accountKey": hx(account_key), "account": account, "epoch": epoch,
    "password": {"masterSecret": hx(master), "parameters": p, "nonce": hx(nonce), "wrapped": hx(password_wrap)},
    "recovery": {"recoveryKey": hx(recovery_key), "printed": b32(recovery_key + recovery_check),
                 "nonce": hx(recovery_nonce), "wrapped": hx(recovery_wrap)},
})

# Item IDs.
id_key = hkdf(account_key, LABELS["itemID"])
def item_id(zone, fields):
    message = lp(zone.encode()) + u32(len(fields)) + b"".join(lp(n.encode()) + lp(v) for n, v in fields)
    return hmac.new(id_key, message, hashlib.sha256).digest()
id_cases = [
    ("keychain", [("class", b"genp"), ("agrp", b"default"), ("sync", b"1"), ("acct", b"alice"), ("svce", b"mail")]),
    ("keychain", [("class", b"genp"), ("agrp", b"default"), ("sync", b"1"), ("acct", b""), ("svce", b"mail")]),
    ("keychain", [("class", b"genp"), ("agrp", b"default"), ("sync", b"1"), ("acct", b"alicem"), ("svce", b"ail")]),
    ("kv.settings", [("key", b"theme")]),
    ("kv.settings", []),
]
write("item-ids.json", {"accountKey": hx(account_key), "cases": [
    {"zone": z, "fields": [{"name": n, "value": hx(v)} for n, v in f], "itemID": hx(item_id(z, f))} for z, f in id_cases]})

# Item blobs.
blob_key = hkdf(account_key, LABELS["itemBlob"])
def vv_encoding(vector):
    entries = sorted(vector.items(), key=lambda e: e[0].encode())
    return bytes([len(entries)]) + b"".join(bytes([len(d)]) + d.encode() + struct.pack(">Q", c) for d, c in entries)
def padded_length(n):
    power = 1
    while power < n:
        power *= 2
    granule = max(128, power // 16)
    return (n + granule - 1) // granule * granule
# Blobs of epoch 1 have the format 0x01 (no epoch); a later epoch's name it, 0x02 ‖ epoch (4), and
# start their associated data with 0x02 (docs/decisions/0177). Each later epoch has its own key.
epoch_keys = {2: seq(32, 0x72), 7: seq(32, 0x77)}
blob_cases = [
    ("keychain", 2, {"deviceA": 2, "deviceB": 1}, False, bytes(seq(40, 0x20)), 1_700_000_000_123, "deviceA"),
    ("keychain", 1, {"deviceB": 3}, True, b"", 1_700_000_500_000, "deviceB"),
    ("kv.settings", 7, {"0123456789abcdef0123456789abcdef": 18446744073709551615}, False, bytes(seq(1000, 0x05)), -5, "0123456789abcdef0123456789abcdef"),
]
blobs = []
for i, (zone, epoch, vector, deleted, payload, mtime, device) in enumerate(blob_cases):
    iid = item_id(zone, [("key", f"item{i}".encode())])
    plain = struct.pack(">q", mtime) + bytes([len(device)]) + device.encode() + lp(payload)
    plain += bytes(padded_length(len(plain)) - len(plain))
    version = 1 if epoch == 1 else 2
    ad = bytes([version]) + lp(account.encode()) + lp(zone.encode()) + lp(hx(iid).encode()) + u32(epoch) + lp(vv_encoding(vector)) + bytes([1 if deleted else 0])
    n = seq(12, 0xc0 + i)
    key = blob_key if epoch == 1 else hkdf(epoch_keys[epoch], LABELS["itemBlob"])
    header = bytes([1]) if epoch == 1 else bytes([2]) + u32(epoch)
    blobs.append({
        "context": {"account": account, "zone": zone, "itemID": hx(iid), "keyEpoch": epoch, "versionVector": vector, "isDeleted": deleted},
        "envelope": {"payload": hx(payload), "modificationTime": mtime, "device": device},
        "nonce": hx(n), "paddedPlaintextLength": len(plain),
        "blob": hx(header + n + AESGCM(key).encrypt(n, plain, ad)),
    })
write("item-blobs.json", {"accountKey": hx(account_key), "epochKeys": {str(e): hx(k) for e, k in epoch_keys.items()}, "cases": blobs})

# Auth key verifiers.
verifiers = []
for auth_key, salt, rounds in [(seq(32, 0x55), seq(16, 0x66), 20_000), (seq(32, 0x99), seq(16, 0x11), 1_000)]:
    digest = hashlib.pbkdf2_hmac("sha256", auth_key, salt, rounds, 32)
    verifiers.append({"authKey": hx(auth_key), "salt": hx(salt), "rounds": rounds,
                      "encoded": hx(bytes([1, 1]) + u32(rounds) + salt + digest)})
write("auth-verifier.json", verifiers)

# Account state (docs/decisions/0120): zone-state digest terms, a signed zone statement, and the
# first entries of a device log. Ed25519 signatures are deterministic (RFC 8032), so Swift's must
# match these byte for byte.
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives import serialization

def u64(n): return struct.pack(">Q", n)
def raw_public(private):
    return private.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)

state_key = hkdf(account_key, LABELS["zoneState"])
def term(zone, iid, vector, deleted):
    message = lp(zone.encode()) + lp(iid.encode()) + lp(vv_encoding(vector)) + bytes([1 if deleted else 0])
    return hmac.new(state_key, message, hashlib.sha256).digest()
state_versions = [
    ("keychain", "a" * 64, {"deviceA": 2, "deviceB": 1}, False),
    ("keychain", "a" * 64, {"deviceB": 2}, False),
    ("keychain", "b" * 64, {"deviceA": 5}, True),
]
total = 0
terms = []
for zone, iid, vector, deleted in state_versions:
    t = term(zone, iid, vector, deleted)
    total = (total + int.from_bytes(t, "big")) % (1 << 256)
    terms.append({"zone": zone, "itemID": iid, "versionVector": vector, "isDeleted": deleted, "term": hx(t)})
digest = total.to_bytes(32, "big")

signing = Ed25519PrivateKey.from_private_bytes(seq(32, 0x42))
statement = (lp(b"synckeychain/v1/zone-statement") + lp(account.encode()) + lp(b"keychain") + lp(b"deviceA")
             + u32(1) + u64(7) + seq(32, 0x10) + u64(1234) + digest + seq(32, 0x20))
statement_wire = statement + signing.sign(statement)

log_key = hkdf(account_key, LABELS["deviceLog"])
def log_entry(index, previous, kind, subject, signing_key, agreement_key, epoch, signer):
    return (lp(b"synckeychain/v1/device-log-entry") + lp(account.encode()) + u64(index) + previous + bytes([kind])
            + lp(subject.encode()) + lp(signing_key) + lp(agreement_key) + u32(epoch) + lp(signer.encode()))
second = Ed25519PrivateKey.from_private_bytes(seq(32, 0x52))
first_bytes = log_entry(0, bytes(32), 1, "deviceA", raw_public(signing), b"", 1, "deviceA")
first_wire = first_bytes + lp(signing.sign(first_bytes)) + lp(hmac.new(log_key, first_bytes, hashlib.sha256).digest())
second_bytes = log_entry(1, hashlib.sha256(first_wire).digest(), 1, "deviceB", raw_public(second), seq(5, 0x01), 1, "deviceA")
second_wire = second_bytes + lp(signing.sign(second_bytes)) + lp(b"")
write("account-state.json", {
    "accountKey": hx(account_key), "account": account,
    "labels": {k: {"label": v.decode(), "key": hx(hkdf(account_key, v))} for k, v in LABELS.items() if k in ("zoneState", "deviceLog")},
    "digest": {"terms": terms, "digest": hx(digest)},
    "statement": {"signingKey": hx(seq(32, 0x42)), "publicKey": hx(raw_public(signing)), "previous": hx(seq(32, 0x10)),
                  "logHead": hx(seq(32, 0x20)), "wire": hx(statement_wire)},
    "deviceLog": {"secondSigningKey": hx(seq(32, 0x52)), "entries": [hx(first_wire), hx(second_wire)]},
})

# Approval protocol 2 (docs/decisions/0271): the new device's commitment, the transcript of both
# parts, its code (40 bits of HKDF, Crockford base 32) and the approver's signed hand-over.
def approval_commitment(account, device, signing_key, agreement_key, nonce):
    return hashlib.sha256(lp(b"synckeychain/v2/approval-commitment") + lp(account.encode()) + lp(device.encode())
                          + lp(signing_key) + lp(agreement_key) + lp(nonce)).digest()
def approval_transcript(account, requester, approver):
    device, signing_key, agreement_key, nonce = requester
    a_device, a_signing_key, a_nonce = approver
    return hashlib.sha256(lp(b"synckeychain/v2/approval-transcript") + lp(account.encode())
                          + lp(approval_commitment(account, *requester)) + lp(device.encode()) + lp(signing_key)
                          + lp(agreement_key) + lp(nonce) + lp(a_device.encode()) + lp(a_signing_key) + lp(a_nonce)).digest()
def approval_code(transcript_hash):
    bits = int.from_bytes(hkdf(transcript_hash, b"synckeychain/v2/approval-code", 5), "big")
    alphabet = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
    chars = "".join(alphabet[(bits >> (35 - 5 * i)) & 31] for i in range(8))
    return chars[:4] + "-" + chars[4:]
approval_cases = [
    (account, ("deviceN", raw_public(second), seq(1216, 0x07), seq(32, 0x99)), ("deviceA", raw_public(signing), seq(32, 0x33))),
    ("bob", ("0123456789abcdef0123456789abcdef", seq(32, 0x01), b"", seq(32, 0x00)), ("fedcba9876543210fedcba9876543210", seq(32, 0x02), seq(32, 0xff))),
]
def approval_vector(a, requester, approver):
    transcript = approval_transcript(a, requester, approver)
    return {"account": a,
            "requester": {"device": requester[0], "signingKey": hx(requester[1]), "agreementKey": hx(requester[2]), "nonce": hx(requester[3])},
            "approver": {"device": approver[0], "signingKey": hx(approver[1]), "nonce": hx(approver[2])},
            "commitment": hx(approval_commitment(a, *requester)), "transcript": hx(transcript), "code": approval_code(transcript)}
transcript = approval_transcript(*approval_cases[0])
key_commitment = hashlib.sha256(lp(b"synckeychain/v2/approval-account-key") + lp(account.encode()) + u32(2) + lp(account_key)).digest()
statements_digest = hashlib.sha256(lp(b"synckeychain/v2/approval-statements") + lp(b"keychain") + lp(b"deviceA") + lp(statement_wire)).digest()
hand_over = (lp(b"synckeychain/v2/approval-hand-over") + lp(transcript) + u32(2) + u64(3) + lp(seq(32, 0x20))
             + lp(key_commitment) + lp(statements_digest))
write("approval-codes.json", {
    "cases": [approval_vector(*case) for case in approval_cases],
    "handOver": {"signingKey": hx(seq(32, 0x42)), "accountKey": hx(account_key), "epoch": 2, "logLength": 3, "logHead": hx(seq(32, 0x20)),
                 "statement": {"zone": "keychain", "device": "deviceA", "wire": hx(statement_wire)},
                 "accountKeyCommitment": hx(key_commitment), "statementsDigest": hx(statements_digest),
                 "signedBytes": hx(hand_over), "signature": hx(signing.sign(hand_over))},
})
