// The Python side of the sandbox: run inside the sandboxed interpreter with `python3 -I -S -c`. It
// closes every inherited descriptor but stdin/stdout/stderr, reads one JSON job from stdin, sets
// kernel resource limits, installs an audit hook (defence in depth only: the program can switch it
// off, so the OS sandbox around the interpreter is the boundary), then runs the program once per
// test input. Before each input it prints `{"s": i}` so that the parent can time the input from the
// outside and kill the whole sandbox when it overruns (a loop inside C never reaches the in-process
// timer); after it, one JSON line with the outcome. The program's own prints are captured.

/** The job the harness reads from stdin. */
export interface HarnessJob {
  /** The program's source. */
  readonly program: string;
  /** `call`: define `entryPoint` and call it with each input's arguments; `stdin`: run the program with each input as stdin. */
  readonly mode: 'call' | 'stdin';
  /** Function to call in `call` mode. */
  readonly entryPoint: string;
  /** One entry per test: argument literals (call mode) or stdin lines (stdin mode). */
  readonly inputs: readonly (readonly string[])[];
  /** Seconds each input may run (the in-process timer; the parent enforces it from outside too). */
  readonly timeoutS: number;
  /** Address-space limit in bytes. */
  readonly memoryBytes: number;
  /** CPU seconds for the whole process. */
  readonly cpuS: number;
  /** Largest file the program may write, in bytes. */
  readonly fileBytes: number;
  /** Processes and threads of the sandbox's user (RLIMIT_NPROC). */
  readonly processes: number;
  /** Characters of each output kept. */
  readonly maxOutput: number;
  /** Install the audit hook (tests turn it off to check the OS-level containment alone). */
  readonly auditHook: boolean;
}

/** One line of the harness's output: an input starts (`s`), or its outcome (`i` with `out` or `err`). */
export interface HarnessLine {
  /** The input that starts now. */
  readonly s?: number;
  /** The input this outcome belongs to. */
  readonly i?: number;
  /** The output: repr of the return value (call mode) or captured stdout (stdin mode). */
  readonly out?: string;
  /** The error marker when it failed: an exception class name, `timeout` or `memory`. */
  readonly err?: string;
}

export const HARNESS = String.raw`
import os
os.closerange(3, 1 << 16)
import sys, json, ast, io, resource, signal
job = json.loads(sys.stdin.read())
real_stdout = sys.stdout
for lim, soft, hard in ((resource.RLIMIT_AS, job['memoryBytes'], job['memoryBytes']), (resource.RLIMIT_CPU, job['cpuS'], job['cpuS'] + 1),
                        (resource.RLIMIT_FSIZE, job['fileBytes'], job['fileBytes']), (resource.RLIMIT_NOFILE, 64, 64), (resource.RLIMIT_CORE, 0, 0),
                        (resource.RLIMIT_NPROC, job['processes'], job['processes'])):
    try:
        resource.setrlimit(lim, (soft, hard))
    except (ValueError, OSError):
        pass
WORK = os.path.realpath(os.getcwd())
BLOCKED = ('socket.', 'subprocess.', 'os.system', 'os.exec', 'os.posix_spawn', 'os.spawn', 'os.fork', 'os.forkpty',
           'pty.', 'ctypes.', 'os.kill', 'os.killpg', 'signal.pthread_kill', 'sys.remote_exec', 'winreg.', 'mmap.')
PATH_EVENTS = {'os.mkdir', 'os.rmdir', 'os.remove', 'os.rename', 'os.link', 'os.symlink', 'os.truncate', 'os.chmod',
               'os.chown', 'os.utime', 'os.chdir', 'os.chflags', 'os.lchflags', 'os.setxattr', 'os.removexattr', 'shutil.rmtree',
               'shutil.copyfile', 'shutil.copymode', 'shutil.copystat', 'shutil.copytree', 'shutil.move', 'shutil.chown'}
def inside(p):
    if isinstance(p, int):
        return True
    try:
        full = os.path.realpath(os.fsdecode(p))
    except Exception:
        return False
    return full == WORK or full.startswith(WORK + os.sep)
def hook(event, args):
    if event.startswith(BLOCKED) or (event == 'import' and args and args[0] in ('ctypes', '_ctypes')):
        raise PermissionError('sandbox: ' + event + ' is not allowed')
    if event == 'open':
        path, mode, flags = args
        if isinstance(path, (str, bytes)):
            p = os.fsdecode(path)
            if os.path.realpath(p).startswith('/proc'):
                raise PermissionError('sandbox: /proc is not readable')
        writing = (isinstance(mode, str) and any(c in mode for c in 'wax+')) or (flags & (os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_TRUNC))
        if writing and not inside(path):
            raise PermissionError('sandbox: writing outside the working folder is not allowed')
    elif event in PATH_EVENTS:
        for a in args:
            if isinstance(a, (str, bytes, os.PathLike)) and not inside(a):
                raise PermissionError('sandbox: ' + event + ' outside the working folder is not allowed')
class Timeout(BaseException):
    pass
def on_alarm(signum, frame):
    raise Timeout()
signal.signal(signal.SIGALRM, on_alarm)
done = set()
current = [-1]
def on_cpu(signum, frame):
    # the CPU budget of this process is spent (threads, or a program that ignores the per-input
    # timer): the input running now timed out, and the parent runs the rest in a fresh process
    if current[0] >= 0 and current[0] not in done:
        emit({'i': current[0], 'err': 'timeout'})
    real_stdout.flush()
    os._exit(0)
signal.signal(signal.SIGXCPU, on_cpu)
def emit(obj):
    if 'i' in obj:
        done.add(obj['i'])
    real_stdout.write(json.dumps(obj) + '\n')
    real_stdout.flush()
if job.get('auditHook', True):
    sys.addaudithook(hook)
limit = job['maxOutput']
try:
    code = compile(job['program'], 'solution.py', 'exec')
except BaseException as e:
    for i in range(len(job['inputs'])):
        emit({'s': i})
        emit({'i': i, 'err': type(e).__name__})
    sys.exit(0)
for i, inp in enumerate(job['inputs']):
    capture = io.StringIO()
    current[0] = i
    emit({'s': i})
    sys.stdout = capture
    sys.stdin = io.StringIO('\n'.join(inp) + '\n' if job['mode'] == 'stdin' else '')
    result = None
    try:
        signal.setitimer(signal.ITIMER_REAL, job['timeoutS'])
        ns = {'__name__': '__main__' if job['mode'] == 'stdin' else 'solution', '__builtins__': __builtins__}
        exec(code, ns)
        if job['mode'] == 'call':
            fn = ns.get(job['entryPoint'])
            if not callable(fn):
                raise NameError(job['entryPoint'])
            value = fn(*[ast.literal_eval(a) for a in inp])
            signal.setitimer(signal.ITIMER_REAL, 0)
            result = {'i': i, 'out': repr(value)[:limit]}
        else:
            signal.setitimer(signal.ITIMER_REAL, 0)
            result = {'i': i, 'out': capture.getvalue()[:limit]}
    except Timeout:
        result = {'i': i, 'err': 'timeout'}
    except MemoryError:
        result = {'i': i, 'err': 'memory'}
    except BaseException as e:
        result = {'i': i, 'err': type(e).__name__[:60]}
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        sys.stdout = real_stdout
    try:
        emit(result)
    except BaseException:
        emit({'i': i, 'err': 'unprintable'})
`;
