"""Fake secrets for the redaction tests, assembled from pieces so that no file looks like it
leaks real keys to a secret scanner."""

from __future__ import annotations

ALNUM = "aB3dE5fG7hJ9kL1mN2pQ4rS6tU8vW0xY"  # 32 characters
OPENAI = "sk-" + ALNUM[:24] + "T3BlbkFJ" + ALNUM[:12]
OPENAI_PROJECT = "sk-" + "proj-" + ALNUM + "_-" + ALNUM[:10]
ANTHROPIC = "sk-" + "ant-api03-" + ALNUM + "-" + ALNUM + "_AA"
AWS = "AKIA" + "IOSFODNN7EXAMPLE"
GITHUB = "ghp_" + ALNUM + "1234"
GITHUB_PAT = "github_pat_" + "11ABCDEFG0" + "_" + ALNUM + ALNUM
SLACK = "xoxb-" + "123456789012-1234567890123-" + ALNUM[:24]
GOOGLE = "AIza" + "SyD-" + ALNUM[:31]  # 35 characters after the prefix
STRIPE = "sk_" + "live_" + ALNUM[:24]
HUGGINGFACE = "hf_" + ALNUM + "zz"
JWT = (
    "eyJ" + "hbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9"
    "." + "eyJ" + "zdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4ifQ"
    "." + "SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"
)
PEM = (
    "-----BEGIN " + "RSA PRIVATE KEY-----\n"
    "MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun\n"
    "VTLw7onLRnrq0/IzW7yWR7QkrmBL7jTKEn5u+qKhbwKfBstIs+bMY2Zkp18gnTxK\n"
    "-----END " + "RSA PRIVATE KEY-----"
)
