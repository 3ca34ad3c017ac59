// The bubblewrap sandbox around the interpreter. Fresh user, PID, network, IPC, UTS (and, where the
// kernel has them, cgroup) namespaces; a root filesystem that is an empty read-only tmpfs holding
// only the interpreter, its standard library and the shared libraries they load (found with ldd),
// a fresh /proc of the sandbox's own PID namespace, a minimal read-only /dev, a private size-capped
// tmpfs at /tmp as the working folder, an empty environment, no capabilities, no further user
// namespaces, and --die-with-parent. Killing the sandbox's init (its PID 1) ends every process in
// it, however the program forked or detached. As root, bwrap itself runs as nobody, so that the
// sandbox's processes have an unprivileged uid on the host and RLIMIT_NPROC (which never applies
// to uid 0) holds, counted per sandbox because each has its own user namespace.
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { CorlError } from '../../../core/errors';
import { HARNESS, type HarnessJob } from './harness';

/** The uid and gid generated code runs as, inside the sandbox and (when corl runs as root) on the host. */
export const NOBODY = 65534;
/** Bytes of the sandbox's /tmp (files count against the host's memory, not the program's). */
export const TMP_BYTES = 64 * 1024 * 1024;

/** How to start a sandbox on this machine, as worked out (and tried) once per bwrap and interpreter. */
export interface BwrapPlan {
  /** The bwrap executable. */
  readonly bwrap: string;
  /** The interpreter, by its real path (the same path inside the sandbox). */
  readonly python: string;
  /** bwrap's options, up to the command. */
  readonly args: readonly string[];
  /** The uid and gid bwrap is started with (nobody when corl runs as root), or undefined: corl's own. */
  readonly runAs?: number;
  /** Whether RLIMIT_NPROC holds (false only when the sandbox's processes are uid 0 on the host). */
  readonly processCap: boolean;
}

/** The bwrap to use: the option (a path or a name on PATH), else /usr/bin/bwrap, else bwrap on PATH; null when there is none. */
export function findBwrap(option: string): string | null {
  const candidates = option ? [option] : ['/usr/bin/bwrap', '/usr/local/bin/bwrap', 'bwrap'];
  for (const c of candidates) {
    const found = c.includes('/') ? (isExecutable(c) ? c : null) : onPath(c);
    if (found) return found;
  }
  return null;
}

function isExecutable(p: string): boolean {
  try {
    fs.accessSync(p, fs.constants.X_OK);
    return fs.statSync(p).isFile();
  } catch {
    return false;
  }
}

function onPath(name: string): string | null {
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    if (dir && isExecutable(path.join(dir, name))) return path.join(dir, name);
  }
  return null;
}

/** What the interpreter needs: its real executable, the folders on its isolated sys.path, and site-packages to hide. */
interface PythonLayout {
  readonly exe: string;
  readonly dirs: readonly string[];
  readonly hide: readonly string[];
}

const LAYOUT = String.raw`
import sys, os, json, sysconfig
dirs = [p for p in sys.path if p and os.path.exists(p)]
site = sysconfig.get_paths().get('purelib', '')
print(json.dumps({'exe': os.path.realpath(sys.executable), 'dirs': [os.path.realpath(p) for p in dirs], 'site': os.path.realpath(site) if site else ''}))
`;

function pythonLayout(python: string): PythonLayout {
  const r = spawnSync(python, ['-I', '-S', '-c', LAYOUT], { encoding: 'utf8', env: {}, cwd: '/', timeout: 20_000 });
  let v: { exe?: unknown; dirs?: unknown; site?: unknown } | undefined;
  try {
    v = r.status === 0 ? JSON.parse(r.stdout) : undefined;
  } catch {
    v = undefined;
  }
  if (!v || typeof v.exe !== 'string' || !Array.isArray(v.dirs)) {
    throw new CorlError(
      'CORL_ERR_SANDBOX_UNAVAILABLE',
      `expected the python3 interpreter "${python}" to describe its standard library, got ${r.error ? r.error.message : `exit ${r.status}: ${(r.stderr ?? '').trim().slice(0, 300)}`}`,
      { hint: 'set the reward option `python` to a working python3 (empty: /usr/bin/python3)' },
    );
  }
  const dirs = (v.dirs as unknown[]).filter((d): d is string => typeof d === 'string' && d.startsWith('/'));
  const site = typeof v.site === 'string' ? v.site : '';
  // installed packages are not the interpreter's (and -S keeps them off sys.path): hidden under an empty tmpfs
  const hide = site && dirs.some((d) => site.startsWith(d + '/')) && fs.existsSync(site) ? [site] : [];
  return { exe: v.exe, dirs: [...new Set(dirs)], hide };
}

/** Shared libraries the interpreter and its extension modules load, by the paths the loader opens; null when ldd cannot tell. */
function sharedLibraries(layout: PythonLayout): string[] | null {
  const objects = [layout.exe];
  for (const d of layout.dirs) {
    if (!fs.statSync(d).isDirectory()) continue;
    for (const f of fs.readdirSync(d)) if (f.endsWith('.so')) objects.push(path.join(d, f));
  }
  const r = spawnSync('ldd', objects, {
    encoding: 'utf8',
    env: { LC_ALL: 'C' },
    cwd: '/',
    timeout: 20_000,
    maxBuffer: 16 * 1024 * 1024,
  });
  if (r.error || typeof r.stdout !== 'string' || !r.stdout.includes('/')) return null;
  const libs = new Set<string>();
  for (const line of r.stdout.split('\n')) {
    if (line.endsWith(':')) continue; // the heading naming the object that follows
    const m = /=>\s*(\/\S+)/.exec(line) ?? /^\s*(\/\S+)\s+\(/.exec(line);
    if (m && fs.existsSync(m[1]!)) libs.add(m[1]!);
  }
  return libs.size ? [...libs] : null;
}

/** Library folders bound whole when ldd is missing (a musl system, say): still no /etc, /home, /root or project. */
const LIBRARY_DIRS = ['/lib', '/lib64', '/lib32', '/usr/lib', '/usr/lib64', '/usr/lib32', '/usr/local/lib'];

/** bwrap's options for the interpreter's minimal filesystem. */
function bwrapArgs(layout: PythonLayout, libs: string[] | null, features: ReadonlySet<string>): string[] {
  const a = ['--unshare-all', '--unshare-user'];
  if (features.has('--disable-userns')) a.push('--disable-userns');
  a.push(
    '--die-with-parent',
    '--new-session',
    '--clearenv',
    '--cap-drop',
    'ALL',
    '--uid',
    String(NOBODY),
    '--gid',
    String(NOBODY),
    '--hostname',
    'corl-sandbox',
  );
  const bound = new Set<string>();
  const bind = (p: string) => {
    if (!bound.has(p)) {
      bound.add(p);
      a.push('--ro-bind', p, p);
    }
  };
  if (libs) {
    for (const l of libs) bind(l);
    // the loader's cache, so that libraries found through it are found the same way inside
    if (fs.existsSync('/etc/ld.so.cache')) bind('/etc/ld.so.cache');
  } else {
    for (const d of LIBRARY_DIRS) if (fs.existsSync(d)) bind(d);
  }
  for (const d of layout.dirs) bind(d);
  for (const h of layout.hide) a.push('--tmpfs', h);
  bind(layout.exe);
  a.push('--proc', '/proc', '--dev', '/dev', '--remount-ro', '/dev');
  if (features.has('--size')) a.push('--size', String(TMP_BYTES));
  a.push('--tmpfs', '/tmp', '--chdir', '/tmp', '--remount-ro', '/', '--info-fd', '3');
  return a;
}

/** The options this bwrap knows, from its --help. */
function bwrapFeatures(bwrap: string): Set<string> {
  const r = spawnSync(bwrap, ['--help'], { encoding: 'utf8', env: {}, cwd: '/', timeout: 10_000 });
  const text = `${r.stdout ?? ''}${r.stderr ?? ''}`;
  return new Set(['--disable-userns', '--size'].filter((f) => text.includes(f)));
}

const PROBE_JOB: HarnessJob = {
  program: 'import os\nprint(os.getuid(), len(os.environ))',
  mode: 'stdin',
  entryPoint: '',
  inputs: [['']],
  timeoutS: 10,
  memoryBytes: 512 * 1024 * 1024,
  cpuS: 10,
  fileBytes: 1024 * 1024,
  processes: 16,
  maxOutput: 100,
  auditHook: true,
};

/** Start the harness in the sandbox once on a trivial program; the failure text, or null when it worked. */
function probe(bwrap: string, python: string, args: readonly string[], runAs: number | undefined): string | null {
  const r = spawnSync(bwrap, [...args, '--', python, '-I', '-S', '-c', HARNESS], {
    input: JSON.stringify(PROBE_JOB),
    encoding: 'utf8',
    env: {},
    cwd: '/',
    timeout: 30_000,
    stdio: ['pipe', 'pipe', 'pipe', 'pipe'],
    ...(runAs !== undefined ? { uid: runAs, gid: runAs } : {}),
  });
  if (r.error) return r.error.message;
  if (r.status === 0 && typeof r.stdout === 'string' && r.stdout.includes(`"out": "${NOBODY} 1\\n"`)) return null;
  return `exit ${r.status ?? r.signal}: ${
    String(r.stderr ?? '')
      .trim()
      .slice(0, 400) ||
    String(r.stdout ?? '')
      .trim()
      .slice(0, 400)
  }`;
}

const plans = new Map<string, BwrapPlan>();

/**
 * The sandbox plan for this bwrap option and interpreter, worked out and tried once per process.
 * Throws CORL_ERR_SANDBOX_BWRAP_MISSING when there is no bwrap and CORL_ERR_SANDBOX_BWRAP_FAILED when
 * it cannot build the sandbox here.
 */
export function bwrapPlan(bwrapOption: string, python: string): BwrapPlan {
  const key = JSON.stringify([bwrapOption, python]);
  const cached = plans.get(key);
  if (cached) return cached;
  const bwrap = findBwrap(bwrapOption);
  if (!bwrap) {
    throw new CorlError(
      'CORL_ERR_SANDBOX_BWRAP_MISSING',
      `expected bubblewrap (bwrap) to sandbox generated code, got ${bwrapOption ? `no executable at "${bwrapOption}"` : 'none on this machine (/usr/bin/bwrap, PATH)'}`,
      {
        hint: 'install it (Debian/Ubuntu: `apt-get install -y bubblewrap`; Fedora: `dnf install bubblewrap`), or set the reward option `bwrap` to its path; only for code you trust, `isolation: "unsafe-process"` runs it unisolated',
      },
    );
  }
  const layout = pythonLayout(python);
  const args = bwrapArgs(layout, sharedLibraries(layout), bwrapFeatures(bwrap));
  const root = process.getuid?.() === 0;
  // as root, bwrap runs as nobody (an unprivileged user namespace) so that the process cap holds;
  // where that does not work (no unprivileged user namespaces, an interpreter nobody cannot read),
  // bwrap runs as root and only the wall-clock kill bounds a fork bomb
  const tries: (number | undefined)[] = root ? [NOBODY, undefined] : [undefined];
  const failures: string[] = [];
  for (const runAs of tries) {
    const failure = probe(bwrap, layout.exe, args, runAs);
    if (failure === null) {
      const plan: BwrapPlan = {
        bwrap,
        python: layout.exe,
        args,
        ...(runAs !== undefined ? { runAs } : {}),
        processCap: !root || runAs !== undefined,
      };
      plans.set(key, plan);
      return plan;
    }
    failures.push(`${runAs !== undefined ? `as uid ${runAs}` : 'as this user'}: ${failure}`);
  }
  throw new CorlError(
    'CORL_ERR_SANDBOX_BWRAP_FAILED',
    `expected ${bwrap} to start the code sandbox (user, PID and network namespaces), got ${failures.join('; ')}`,
    {
      hint: 'allow user namespaces (sysctl kernel.unprivileged_userns_clone=1, or user.max_user_namespaces > 0; in a container, run it with --privileged or a seccomp profile that allows unshare), or, only for code you trust, set `isolation: "unsafe-process"`',
    },
  );
}
