"""Fetches the test suite of the installed `secretstorage` from its source release on PyPI into
DIRECTORY/VERSION/tests, DIRECTORY the first argument (once per version; kept there between runs),
and prints DIRECTORY/VERSION, for SecretServiceTests to run `python -m unittest discover` there."""
import importlib.metadata
import pathlib
import shutil
import subprocess
import sys
import tarfile
import tempfile

version = importlib.metadata.version("secretstorage")
target = pathlib.Path(sys.argv[1]) / version
if not (target / "tests" / "test_item.py").exists():
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as scratch:
        subprocess.run(
            [sys.executable, "-m", "pip", "download", "--quiet", "--disable-pip-version-check", "--no-deps",
             "--no-binary", ":all:", f"secretstorage=={version}", "--dest", scratch],
            check=True)
        archive = next(pathlib.Path(scratch).glob("*.tar.gz"))
        staging = pathlib.Path(tempfile.mkdtemp(dir=target.parent))
        with tarfile.open(archive) as tar:
            for member in tar.getmembers():
                parts = pathlib.PurePosixPath(member.name).parts
                if member.isfile() and len(parts) == 3 and parts[1] == "tests" and parts[2].endswith(".py"):
                    (staging / "tests").mkdir(exist_ok=True)
                    (staging / "tests" / parts[2]).write_bytes(tar.extractfile(member).read())
        shutil.rmtree(target, ignore_errors=True)
        staging.rename(target)
print(target)
