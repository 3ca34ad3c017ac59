"""corl's host for a Python reward function (the `corl:python` reward plugin). Standard library only.

corl starts it once per plugin instance as

    <python> host.py '<setup JSON>'

and keeps it for the whole run. It imports the researcher's module, then answers requests until its
stdin closes. The setup JSON: {"module": a .py path or a dotted module name, "function": name,
"signature": "trl" | "verl", "withheld": [parameter names a label-free run never passes]}.

Framing (docs/guide/python-rewards.md, "The pipe"): UTF-8 JSON objects, one per line ("\\n"), on the
process's stdin (requests) and stdout (answers). JSON text never holds a raw newline, so a line is a
message.

On Linux the process corl starts is a guard (class Guard): it makes itself the child subreaper of its
tree and forks the host proper, to which it relays the pipe over a Unix socket whose every chunk the
kernel labels with the sending process; what any other process writes there (a child forked with
libc's fork(), which skips Python's at-fork hooks) is dropped, never relayed. Told to end (SIGTERM,
the host's exit, the end of its stdin, or corl's death through PR_SET_PDEATHSIG), the guard SIGKILLs
every process below it, a double-forked daemon in a session of its own included (orphans of the tree
become the guard's children), then ends as the host ended. Where the kernel has no subreaper or
sender credentials the host runs in the process corl started, and corl kills its process group.

In the host, before the module is imported, the pipe moves to private descriptors: file descriptor 0
becomes /dev/null (a function that reads stdin reads nothing) and 1 becomes a copy of 2 (whatever the
function prints, from Python or from C, goes to stderr), so nothing the function does with stdin or
stdout can touch the pipe. A process the function forks with os.fork closes its copies of the pipe at
once and, should it return into this loop, exits without a word. The function itself runs in the
host and can write on the pipe: corl checks every line against the protocol's schemas (messages.ts).

    host  -> corl  {"hello": {"python": "3.11.2", "guard": true}}  (the host runs; nothing imported yet)
    host  -> corl  {"ready": {"function": "reward.reward_func", "async": false, "python": "3.11.2",
                              "supervision": "reads" | "ignores" | "unknown"}}
                   or {"fatal": ERROR} (import failed, no such function, a parameter never passed)
    corl  -> host  {"id": 1, "calls": [CALL, ...]}
    host  -> corl  {"id": 1, "results": [RESULT, ...]}  or  {"id": 1, "error": ERROR, "call": i}

ERROR is {"kind", "type", "message", "where", "last"}: `last` is the traceback's last line and
`where` the innermost frame in the researcher's own code; the whole traceback goes to stderr.

A TRL CALL is {"seed", "state": {"global_step", "max_steps"}, "context": {...}, "groups": [GROUP]}
with GROUP {"prompt", "completions", "completion_ids", "columns": {name: value per group},
"per_completion": {name: [value per completion]}}; the function is called as TRL's GRPOTrainer calls
it: reward_func(prompts=..., completions=..., completion_ids=..., <columns>, trainer_state=...,
log_extra=..., log_metric=...), every column a list with one entry per completion, prompts repeated
once per completion. Its RESULT is {"rewards": [number or null], "metrics": {name: [values]},
"extra": {column: [values]}}.

A verl CALL is {"seeds": [one per sample], "samples": [{"data_source", "solution_str", "ground_truth",
"extra_info"}]};
compute_score(data_source=..., solution_str=..., ground_truth=..., extra_info=...) runs once per
sample, and the RESULT is {"scores": [number], "extra": [{name: number}]}.

Before each call `random` (and numpy's global generator, if the module imported numpy) is seeded
from the call's "seed" (verl: the sample's), so a function that draws random numbers gives the same rewards for the same
inputs.
"""

import sys

if sys.version_info < (3, 8):
    sys.stderr.write("corl's Python host needs Python 3.8 or later, got %s\n" % sys.version.split()[0])
    sys.exit(2)

import asyncio  # noqa: E402 - after the version check
import hashlib
import importlib
import importlib.util
import inspect
import json
import math
import numbers
import os
import random
import resource
import select
import signal
import socket
import struct
import time
import traceback
import types

HOST_PID = os.getpid()
MAX_TEXT = 2000
# The pipe's two ends in the host, set by main() once the guard (Linux) has forked it.
PIPE_IN = None
PIPE_OUT = None

PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36
CHUNK = 1 << 16
# The guard stops reading a side while this much waits to be written to the other.
HIGH_WATER = 1 << 20
# How long the guard keeps killing what its tree forks anew before it leaves anyway.
KILL_SECONDS = 5.0
CORE_SIGNALS = {getattr(signal, n) for n in ("SIGABRT", "SIGBUS", "SIGFPE", "SIGILL", "SIGQUIT", "SIGSEGV",
                                             "SIGSYS", "SIGTRAP", "SIGXCPU", "SIGXFSZ") if hasattr(signal, n)}


def _prctl(option, value):
    try:
        import ctypes

        return ctypes.CDLL(None, use_errno=True).prctl(option, value, 0, 0, 0) == 0
    except Exception:  # noqa: B902 - no libc prctl: the host runs unguarded
        return False


def _tree(root):
    """Every live process below root (from /proc's parent links), deepest last; zombies left out."""
    children = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % name, "rb") as f:
                stat = f.read()
        except OSError:
            continue
        fields = stat[stat.rindex(b")") + 2:].split()
        children.setdefault(int(fields[1]), []).append((int(name), fields[0]))
    found, stack = [], [root]
    while stack:
        for pid, state in children.get(stack.pop(), []):
            if state != b"Z":
                found.append(pid)
            stack.append(pid)
    return found


class Guard:
    """The process corl starts (Linux): it forks the host, relays the pipe and, at the end, kills every process
    below it. It runs none of the researcher's code. As the child subreaper, it inherits every orphan of its
    tree (a double-forked daemon that left the session included), so its tree is everything the function
    started; bytes on the socket from any process but the host (the kernel names the sender) never reach corl."""

    def __init__(self, worker, sock, wake):
        self.worker = worker
        self.sock = sock
        self.wake = wake
        self.status = None
        self.to_worker = bytearray()
        self.to_corl = bytearray()
        self.corl_open = True
        self.sock_open = True
        self.shut = False
        self.dropped = set()

    def run(self):
        os.set_blocking(0, False)
        os.set_blocking(1, False)
        self.sock.setblocking(False)
        while self.status is None:
            poll = select.poll()
            if self.corl_open and len(self.to_worker) < HIGH_WATER:
                poll.register(0, select.POLLIN)
            mask = (select.POLLIN if self.sock_open and len(self.to_corl) < HIGH_WATER else 0)
            mask |= select.POLLOUT if self.to_worker else 0
            if mask:
                poll.register(self.sock.fileno(), mask)
            if self.to_corl:
                poll.register(1, select.POLLOUT)
            poll.register(self.wake.fileno(), select.POLLIN)
            for fd, event in poll.poll(1000):
                self.on_event(fd, event)
            self.reap()
        self.drain()
        self.leave(self.status)

    def on_event(self, fd, event):
        if fd == self.wake.fileno():
            for signum in self.wake.recv(CHUNK):
                if signum != signal.SIGCHLD:
                    self.leave(None, signum)
        elif fd == 0:
            self.from_corl()
        elif fd == 1:
            self.write_corl()
        else:
            if event & (select.POLLIN | select.POLLHUP | select.POLLERR):
                self.from_worker()
            if event & select.POLLOUT:
                self.write_worker()

    def from_corl(self):
        try:
            data = os.read(0, CHUNK)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        if data:
            self.to_worker += data
            return
        self.corl_open = False
        self.write_worker()

    def write_worker(self):
        try:
            if self.to_worker:
                del self.to_worker[: self.sock.send(self.to_worker)]
        except BlockingIOError:
            return
        except OSError:
            self.to_worker.clear()  # the host is gone: its exit ends the guard
        if not self.to_worker and not self.corl_open and not self.shut:
            self.shut = True
            try:
                self.sock.shutdown(socket.SHUT_WR)  # end of corl's stdin: the host's end of input
            except OSError:
                pass

    def from_worker(self):
        try:
            data, ancillary, _, _ = self.sock.recvmsg(CHUNK, socket.CMSG_SPACE(12))
        except BlockingIOError:
            return False
        except OSError:
            data, ancillary = b"", []
        if not data:
            self.sock_open = False
            return False
        sender = None
        for level, kind, body in ancillary:
            if level == socket.SOL_SOCKET and kind == socket.SCM_CREDENTIALS and len(body) >= 12:
                sender = struct.unpack("iII", body[:12])[0]
        if sender == self.worker:
            self.to_corl += data
        elif sender not in self.dropped:
            self.dropped.add(sender)
            sys.stderr.write("corl's host: dropped what process %s (not the host) wrote to corl's pipe\n" % sender)
            sys.stderr.flush()
        return True

    def write_corl(self):
        try:
            del self.to_corl[: os.write(1, self.to_corl)]
        except BlockingIOError:
            pass
        except OSError:  # corl is gone
            self.leave(None, signal.SIGTERM)

    def drain(self):
        """What the host wrote before it left, to corl."""
        while self.sock_open and self.from_worker():
            pass
        os.set_blocking(1, True)
        while self.to_corl:
            self.write_corl()

    def reap(self):
        while True:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            if pid == self.worker:
                self.status = status

    def kill_tree(self):
        deadline = time.monotonic() + KILL_SECONDS
        while time.monotonic() < deadline:
            live = _tree(os.getpid())
            if not live:
                return
            for pid in live:
                try:
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    pass
            self.reap()
            time.sleep(0.001)

    def leave(self, status, signum=None):
        """Kill the tree, then end as the host ended (its exit code or its signal), or by signum."""
        self.kill_tree()
        self.reap()
        if status is not None and os.WIFEXITED(status):
            os._exit(os.WEXITSTATUS(status))
        signum = os.WTERMSIG(status) if status is not None and os.WIFSIGNALED(status) else signum or signal.SIGKILL
        sys.stderr.flush()
        if signum in CORE_SIGNALS:
            resource.setrlimit(resource.RLIMIT_CORE, (0, 0))  # the host's crash is reported, not dumped again
        try:
            signal.signal(signum, signal.SIG_DFL)
        except (OSError, ValueError):
            pass
        signal.pthread_sigmask(signal.SIG_UNBLOCK, [signum])
        os.kill(os.getpid(), signum)
        os._exit(128 + signum)


def split_guard():
    """On Linux, fork the host under a Guard; returns the host's end of the socket in the host. Returns None
    where the kernel offers no child subreaper or sender credentials: the host then runs in this process,
    unguarded (corl kills its process group). The guard itself never returns."""
    if not sys.platform.startswith("linux") or not hasattr(socket, "SCM_CREDENTIALS"):
        return None
    corl = os.getppid()
    if not _prctl(PR_SET_CHILD_SUBREAPER, 1):
        return None
    _prctl(PR_SET_PDEATHSIG, signal.SIGTERM)  # corl killed outright: the guard still ends its tree
    if os.getppid() != corl:
        os._exit(1)
    wake_r, wake_w = socket.socketpair()
    for s in (wake_r, wake_w):
        s.setblocking(False)
    signal.set_wakeup_fd(wake_w.fileno(), warn_on_full_buffer=False)
    for signum in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT, signal.SIGCHLD):
        signal.signal(signum, lambda *_: None)
    guard_end, host_end = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    guard_end.setsockopt(socket.SOL_SOCKET, socket.SO_PASSCRED, 1)
    guard = os.getpid()
    worker = os.fork()
    if worker == 0:
        signal.set_wakeup_fd(-1)
        for signum in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT, signal.SIGCHLD):
            signal.signal(signum, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        for s in (wake_r, wake_w, guard_end):
            s.close()
        _prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
        if os.getppid() != guard:
            os._exit(1)
        return host_end
    host_end.close()
    wake_w_keep = wake_w  # the wakeup descriptor must stay open
    Guard(worker, guard_end, wake_r).run()
    del wake_w_keep
    os._exit(1)


def _move_pipe(host_end):
    """Keep the pipe on private descriptors; give the function /dev/null for stdin and stderr for stdout."""
    if host_end is None:
        proto_in = os.dup(0)
        proto_out = os.dup(1)
    else:
        proto_in = os.dup(host_end.fileno())
        proto_out = os.dup(host_end.fileno())
        host_end.close()
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    os.dup2(2, 1)
    return os.fdopen(proto_in, "rb", buffering=1 << 16), os.fdopen(proto_out, "wb", buffering=1 << 16)


def _after_fork_in_child():
    # A child forked with os.fork (multiprocessing included) closes its copies of the pipe at once.
    for f in (PIPE_IN, PIPE_OUT):
        try:
            os.close(f.fileno())
        except (OSError, AttributeError):
            pass


def _leave_if_forked():
    if os.getpid() != HOST_PID:
        os._exit(0)


def send(message):
    _leave_if_forked()
    PIPE_OUT.write(json.dumps(message, allow_nan=False, separators=(",", ":")).encode("utf-8") + b"\n")
    PIPE_OUT.flush()


def clip(text):
    text = str(text)
    return text if len(text) <= MAX_TEXT else text[: MAX_TEXT - 20] + "... (%d characters)" % len(text)


class CallError(Exception):
    """A call that cannot be answered: kind is "output" (a wrong return) or "call" (a wrong call)."""

    def __init__(self, kind, message):
        super().__init__(message)
        self.kind = kind


def _user_frame(frames, module_file):
    """The innermost frame in the researcher's folder, else the innermost one outside this host."""
    here = os.path.abspath(__file__)
    folder = os.path.dirname(module_file) + os.sep if module_file else None
    outside = [f for f in frames if not f.filename.startswith("<") and os.path.abspath(f.filename) != here]
    mine = [f for f in outside if folder and os.path.abspath(f.filename).startswith(folder)]
    return (mine or outside or [None])[-1]


def _without_host(tb):
    """The traceback from the first frame that is not this host's (the researcher's call onwards)."""
    here = os.path.abspath(__file__)
    while tb is not None and os.path.abspath(tb.tb_frame.f_code.co_filename) == here:
        tb = tb.tb_next
    return tb


def error_of(exc, kind, module_file=None):
    """An ERROR object for an exception; prints its traceback (from the researcher's code on) to stderr."""
    text = "".join(traceback.format_exception(type(exc), exc, _without_host(exc.__traceback__)))
    sys.stderr.write(text)
    sys.stderr.flush()
    last = traceback.format_exception_only(type(exc), exc)[-1].strip()
    frames = traceback.extract_tb(exc.__traceback__)
    frame = _user_frame(frames, module_file)
    where = "%s:%d in %s" % (frame.filename, frame.lineno, frame.name) if frame else ""
    if isinstance(exc, SyntaxError) and exc.filename:
        where = "%s:%s" % (exc.filename, exc.lineno)
    return {"kind": kind, "type": type(exc).__name__, "message": clip(exc), "where": where, "last": clip(last)}


def plain_error(kind, message):
    return {"kind": kind, "type": "", "message": clip(message), "where": "", "last": clip(message)}


def load_function(setup):
    """Import the module and find the function; returns (function, module file or None)."""
    module = setup["module"]
    if module.endswith(".py"):
        path = os.path.abspath(module)
        folder = os.path.dirname(path)
        sys.path.insert(0, folder)
        stem = os.path.splitext(os.path.basename(path))[0]
        name = stem if stem.isidentifier() and stem not in sys.modules else "corl_reward_" + str(abs(hash(path)))
        spec = importlib.util.spec_from_file_location(name, path)
        if spec is None or spec.loader is None:
            raise CallError("import", "cannot import %s: not a Python source file" % path)
        mod = importlib.util.module_from_spec(spec)
        sys.modules[name] = mod
        spec.loader.exec_module(mod)
        module_file = path
    else:
        sys.path.insert(0, os.getcwd())
        mod = importlib.import_module(module)
        module_file = os.path.abspath(getattr(mod, "__file__", "") or "") or None
    fn = getattr(mod, setup["function"], None)
    if fn is None or not callable(fn):
        defined = sorted(
            k for k, v in vars(mod).items() if callable(v) and not k.startswith("_") and not isinstance(v, type)
            and getattr(v, "__module__", None) == mod.__name__
        )
        what = "no attribute %r" % setup["function"] if fn is None else "%r, which is not callable" % setup["function"]
        raise CallError(
            "function",
            "module %s has %s (its functions: %s)" % (mod.__name__, what, ", ".join(defined) or "none"),
        )
    return fn, module_file


def check_parameters(fn, setup):
    """Refuse a function that requires a parameter corl never passes (e.g. the reference in a label-free run)."""
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return None
    required = [
        p.name
        for p in sig.parameters.values()
        if p.default is inspect.Parameter.empty
        and p.kind in (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    ]
    withheld = [n for n in required if n in setup.get("withheld", [])]
    if withheld:
        raise CallError(
            "withheld",
            "%s requires %s, which corl passes only when the config sets groundTruth: true"
            % (getattr(fn, "__name__", "the function"), ", ".join(repr(n) for n in withheld)),
        )
    return sig


# What a label-free function is handed of its supervisors: TRL keywords, or verl's ground_truth (the
# supervisors' plurality label) and extra_info (which carries it too).
SUPERVISION = {"trl": ("pseudo_label", "matches_pseudo_label", "supervisor_answer_keys"),
               "verl": ("ground_truth", "extra_info")}


def _read_names(code):
    """The local and closure variables a code object (and the code nested in it) ever reads."""
    import dis

    names = set()
    for ins in dis.get_instructions(code):
        if ins.opname.startswith(("LOAD_FAST", "LOAD_DEREF", "LOAD_CLOSURE")):
            names.update(ins.argval if isinstance(ins.argval, tuple) else (ins.argval,))
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names.update(_read_names(const))
    return names


def supervision_of(fn, signature):
    """Whether the function reads what it is handed of its supervisors: "reads", "ignores" or "unknown".

    "ignores" only when its own code (decorators unwrapped) takes none of those parameters, or takes
    them and never reads them, and never reads a **kwargs that would carry them; anything it cannot
    see into (a callable object, a builtin, locals()/vars()/eval) is "unknown".
    """
    target = inspect.unwrap(fn)
    code = getattr(target, "__code__", None)
    if code is None:
        code = getattr(getattr(getattr(target, "__call__", None), "__func__", None), "__code__", None)
    if code is None:
        return "unknown"
    if {"locals", "vars", "eval", "exec"} & set(code.co_names):
        return "unknown"
    read = _read_names(code)
    try:
        params = inspect.signature(target).parameters.values()
    except (TypeError, ValueError):
        return "unknown"
    wanted = SUPERVISION.get(signature, ())
    for p in params:
        if p.kind == inspect.Parameter.VAR_KEYWORD and p.name in read:
            return "unknown"
        if p.name in wanted and p.name in read:
            return "reads"
    return "ignores"


def _safe_supervision(fn, signature):
    try:
        return supervision_of(fn, signature)
    except Exception:  # noqa: B902 - an object the inspection cannot read: say so, never fail the start
        return "unknown"


def accepts_all(sig):
    return sig is None or any(p.kind == inspect.Parameter.VAR_KEYWORD for p in sig.parameters.values())


def keyword_subset(sig, kwargs):
    """Every keyword when the function takes **kwargs, else those it names (TRL passes all; corl adds more)."""
    if accepts_all(sig):
        return kwargs
    names = {
        p.name
        for p in sig.parameters.values()
        if p.kind in (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    }
    return {k: v for k, v in kwargs.items() if k in names}


def seed_generators(seed):
    random.seed(seed)
    np = sys.modules.get("numpy")
    if np is not None:
        try:
            np.random.seed(int.from_bytes(hashlib.sha256(seed.encode("utf-8")).digest()[:4], "little"))
        except Exception:
            pass


def as_number(value, what, allow_none):
    """A finite float from a reward (bools and numpy/torch scalars included), None to abstain where allowed."""
    if value is None:
        if allow_none:
            return None
        raise CallError("output", "%s is None: return a number" % what)
    wanted = "a number or None" if allow_none else "a number"
    if isinstance(value, (str, bytes)):
        raise CallError("output", "%s is %s (%s): return %s" % (what, clip(repr(value))[:80], type(value).__name__, wanted))
    if not isinstance(value, numbers.Real):
        try:
            value = float(value)  # numpy and torch 0-d values
        except Exception:
            raise CallError("output", "%s is %s (%s): return %s"
                            % (what, clip(repr(value))[:80], type(value).__name__, wanted))
    try:
        number = float(value)
    except OverflowError:  # an int beyond a float's range
        number = math.inf if value > 0 else -math.inf
    if not math.isfinite(number):
        raise CallError("output", "%s is %r: return a finite number%s"
                        % (what, number, ", or None to abstain" if allow_none else ""))
    return number


class TrainerState:
    """The fields of transformers.TrainerState that a reward function can use in corl."""

    def __init__(self, global_step, max_steps):
        self.global_step = global_step
        self.max_steps = max_steps
        self.epoch = None
        self.is_world_process_zero = True
        self.is_local_process_zero = True

    def __repr__(self):
        return "TrainerState(global_step=%r, max_steps=%r)" % (self.global_step, self.max_steps)


def trl_kwargs(call, conversational):
    """TRL's keyword arguments for one call, and the recorders of log_metric and log_extra."""
    prompts, completions, completion_ids = [], [], []
    columns = {}
    n = sum(len(g["completions"]) for g in call["groups"])
    offset = 0
    for g in call["groups"]:
        k = len(g["completions"])
        prompt = g["prompt"]
        for i in range(k):
            prompts.append([{"role": "user", "content": prompt}] if conversational else prompt)
            text = g["completions"][i]
            completions.append([{"role": "assistant", "content": text}] if conversational else text)
            ids = g["completion_ids"]
            completion_ids.append(ids[i] if ids is not None else None)
        for name, value in g["columns"].items():
            columns.setdefault(name, [None] * n)[offset:offset + k] = [value] * k
        for name, values in g["per_completion"].items():
            columns.setdefault(name, [None] * n)[offset:offset + k] = values
        offset += k
    metrics = {}
    extra = {}

    def log_metric(name, value):
        metrics.setdefault(str(name), []).append(as_number(value, "log_metric(%r) value" % (name,), False))

    def log_extra(column, values):
        values = list(values)
        if len(values) != n:
            raise CallError("output", "log_extra(%r) got %d values, expected one per completion (%d)"
                            % (column, len(values), n))
        extra.setdefault(str(column), []).extend(values)

    kwargs = dict(columns)
    kwargs.update(
        prompts=prompts,
        completions=completions,
        completion_ids=completion_ids,
        trainer_state=TrainerState(call["state"]["global_step"], call["state"]["max_steps"]),
        log_extra=log_extra,
        log_metric=log_metric,
        corl=types.SimpleNamespace(**call["context"]),
    )
    return kwargs, n, metrics, extra


def trl_result(output, n, metrics, extra):
    if isinstance(output, (str, bytes, dict)) or not hasattr(output, "__iter__"):
        raise CallError("output", "expected a list of %d rewards (one per completion, None to abstain), got %s"
                        % (n, type(output).__name__))
    count = len(output) if hasattr(output, "__len__") else None
    if count is not None and count != n:
        raise CallError("output", "expected %d rewards (one per completion, None to abstain), got %d" % (n, count))
    rewards = []
    for i, r in enumerate(output):
        if i >= n:
            raise CallError("output", "expected %d rewards (one per completion, None to abstain), got more" % n)
        rewards.append(as_number(r, "reward %d" % i, True))
    if len(rewards) != n:
        raise CallError("output", "expected %d rewards (one per completion, None to abstain), got %d"
                        % (n, len(rewards)))
    kept = {}
    for column, values in extra.items():
        try:
            json.dumps(values, allow_nan=False)
            kept[column] = values
        except (TypeError, ValueError):
            kept[column] = [clip(repr(v)) for v in values]
    return {"rewards": rewards, "metrics": metrics, "extra": kept}


def verl_result(output, i):
    extra = {}
    if isinstance(output, dict):
        if "score" not in output:
            raise CallError("output", "sample %d: expected a number or a dict with \"score\", got a dict with keys %s"
                            % (i, ", ".join(map(repr, list(output)[:8]))))
        score = as_number(output["score"], "sample %d's score" % i, False)
        for key, value in output.items():
            if key == "score":
                continue
            if isinstance(value, (bool, numbers.Real)) and math.isfinite(float(value)):
                extra[str(key)] = float(value)
    else:
        score = as_number(output, "sample %d's score" % i, False)
    return score, extra


class Host:
    def __init__(self, fn, sig, setup, module_file):
        self.fn = fn
        self.sig = sig
        self.setup = setup
        self.module_file = module_file
        self.loop = asyncio.new_event_loop()
        self.conversational = setup.get("format") == "conversational"

    def invoke(self, kwargs):
        """Call the function (sync or async: an awaitable is run to completion on the host's loop)."""
        if self.sig is not None and not accepts_all(self.sig):
            kwargs = keyword_subset(self.sig, kwargs)
            try:
                self.sig.bind(**kwargs)
            except TypeError as e:
                raise CallError("call", "%s cannot take corl's arguments: %s" % (self.fn.__name__, e))
        output = self.fn(**kwargs)
        _leave_if_forked()
        if inspect.isawaitable(output):
            output = self.loop.run_until_complete(output)
            _leave_if_forked()
        return output

    def run_trl(self, call):
        kwargs, n, metrics, extra = trl_kwargs(call, self.conversational)
        seed_generators(call["seed"])
        output = self.invoke(kwargs)
        return trl_result(output, n, metrics, extra)

    def run_verl(self, call):
        scores, extras = [], []
        for i, sample in enumerate(call["samples"]):
            seed_generators(call["seeds"][i])
            output = self.invoke(dict(sample))
            score, extra = verl_result(output, i)
            scores.append(score)
            extras.append(extra)
        return {"scores": scores, "extra": extras}

    def answer(self, request):
        results = []
        for i, call in enumerate(request["calls"]):
            try:
                results.append(self.run_verl(call) if self.setup["signature"] == "verl" else self.run_trl(call))
            except CallError as e:
                _leave_if_forked()
                return {"id": request["id"], "call": i, "error": plain_error(e.kind, e)}
            except BaseException as e:  # noqa: B902 - the researcher's exception, SystemExit included
                _leave_if_forked()
                return {"id": request["id"], "call": i, "error": error_of(e, "raised", self.module_file)}
        return {"id": request["id"], "results": results}

    def serve(self):
        for line in PIPE_IN:
            if not line.strip():
                continue
            request = json.loads(line)
            if request.get("op") == "close":
                break
            answer = self.answer(request)
            sys.stdout.flush()
            sys.stderr.flush()
            try:
                send(answer)
            except ValueError as e:
                send({"id": request["id"], "call": 0, "error": plain_error("output", "cannot send the answer: %s" % e)})


def main():
    global HOST_PID, PIPE_IN, PIPE_OUT
    host_end = split_guard()
    HOST_PID = os.getpid()
    PIPE_IN, PIPE_OUT = _move_pipe(host_end)
    os.register_at_fork(after_in_child=_after_fork_in_child)
    setup = json.loads(sys.argv[1])
    send({"hello": {"python": "%d.%d.%d" % sys.version_info[:3], "guard": host_end is not None}})
    # The host's own folder is not the researcher's: keep it off the import path.
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != here]
    module_file = os.path.abspath(setup["module"]) if setup["module"].endswith(".py") else None
    try:
        fn, module_file = load_function(setup)
        sig = check_parameters(fn, setup)
    except CallError as e:
        _leave_if_forked()
        send({"fatal": plain_error(e.kind, e)})
        return 3
    except BaseException as e:  # noqa: B902 - anything the import raised, SystemExit included
        _leave_if_forked()
        send({"fatal": error_of(e, "import", module_file)})
        return 3
    _leave_if_forked()
    target = getattr(fn, "__call__", fn)
    is_async = inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(target)
    send({"ready": {
        "function": "%s.%s" % (getattr(fn, "__module__", "?"), getattr(fn, "__qualname__", setup["function"])),
        "async": bool(is_async),
        "python": "%d.%d.%d" % sys.version_info[:3],
        "supervision": _safe_supervision(fn, setup["signature"]),
    }})
    Host(fn, sig, setup, module_file).serve()
    return 0


if __name__ == "__main__":
    sys.exit(main())
