// Files a user names (configs, task and data files, metrics sinks' outputs): only regular files,
// opened without blocking, read only up to what fits in memory. A FIFO, a device, a folder or a
// kernel file system is refused with a reason the caller turns into its coded error, instead of a
// read that hangs (a FIFO without a writer), never ends (/dev/zero) or reaches the kernel (/proc).
import * as fs from 'node:fs';
import * as path from 'node:path';

/** The most bytes corl reads from one user file into memory (a JavaScript string holds at most about 512 MiB). */
export const MAX_INPUT_BYTES = 512 * 1024 * 1024;

/** A file corl refuses to read or write; `message` says what it is ("a FIFO", "a folder", ...). */
export class NotARegularFile extends Error {
  readonly code: string;
  /** The path refused, once known (set by the readers and openers below). */
  path: string | undefined;
  constructor(what: string, code = 'ENOTREG', file?: string) {
    super(what);
    this.name = 'NotARegularFile';
    this.code = code;
    this.path = file;
  }
}

/** Run `open` on `file`, naming the path in a refusal. */
function naming<T>(file: string, open: () => T): T {
  try {
    return open();
  } catch (e) {
    if (e instanceof NotARegularFile) e.path ??= file;
    throw e;
  }
}

// statfs magic numbers of kernel file systems (linux/magic.h): their files are interfaces, not data.
const KERNEL_FS: ReadonlyMap<number, string> = new Map([
  [0x9fa0, 'proc'],
  [0x62656572, 'sysfs'],
  [0x64626720, 'debugfs'],
  [0x74726163, 'tracefs'],
  [0x73636673, 'securityfs'],
  [0x27e0eb, 'cgroup'],
  [0x63677270, 'cgroup2'],
  [0x1cd1, 'devpts'],
  [0x62656570, 'configfs'],
  [0x6165676c, 'pstore'],
  [0xde5e81e4, 'efivarfs'],
  [0xcafe4a11, 'bpf'],
  [0x42494e4d, 'binfmt_misc'],
  [0x19800202, 'mqueue'],
  [0x65735543, 'fusectl'],
]);

/** What a stat describes, for messages. */
export function describeStat(st: fs.Stats): string {
  if (st.isFile()) return 'a file';
  if (st.isDirectory()) return 'a folder';
  if (st.isFIFO()) return 'a FIFO (named pipe)';
  if (st.isCharacterDevice()) return 'a character device';
  if (st.isBlockDevice()) return 'a block device';
  if (st.isSocket()) return 'a socket';
  return 'not a regular file';
}

/** What a stat describes when it is not a regular file, in words (undefined: a regular file). */
export function regularFileProblem(st: fs.Stats): string | undefined {
  return st.isFile() ? undefined : describeStat(st);
}

/** The kernel file system `file` (or its nearest existing ancestor) lives on, if it is one. */
export function kernelFileSystem(file: string): string | undefined {
  let p = path.resolve(file);
  for (;;) {
    try {
      return KERNEL_FS.get(Number(fs.statfsSync(p).type));
    } catch {
      const up = path.dirname(p);
      if (up === p) return undefined;
      p = up;
    }
  }
}

function refuseKernel(file: string): void {
  const kfs = kernelFileSystem(file);
  if (kfs) throw new NotARegularFile(`a file of the kernel's ${kfs} file system, not a data file`);
}

/** Open `file` with `flags` and O_NONBLOCK; refuse it unless it is a regular file (the descriptor is closed then). */
function openRegular(file: string, flags: number): number {
  refuseKernel(file);
  let fd: number;
  try {
    fd = fs.openSync(file, flags | fs.constants.O_NONBLOCK);
  } catch (e) {
    // A FIFO opened for writing without a reader: ENXIO instead of waiting for one.
    if ((e as NodeJS.ErrnoException).code === 'ENXIO') throw new NotARegularFile('a FIFO (named pipe)');
    throw e;
  }
  const st = fs.fstatSync(fd);
  if (!st.isFile()) {
    fs.closeSync(fd);
    throw new NotARegularFile(describeStat(st), st.isDirectory() ? 'EISDIR' : 'ENOTREG');
  }
  return fd;
}

/**
 * Read a regular file a user named, whole. Refuses (a {@link NotARegularFile}) a folder, a FIFO, a
 * device, a socket, a symlink to one, a file of a kernel file system, or one over `maxBytes`; other
 * failures are the usual errno errors (ENOENT, EACCES).
 */
export function readUserFile(file: string, maxBytes: number = MAX_INPUT_BYTES): Buffer {
  const fd = naming(file, () => openRegular(file, fs.constants.O_RDONLY));
  try {
    const size = fs.fstatSync(fd).size;
    if (size > maxBytes)
      throw new NotARegularFile(
        `a file of ${size} bytes, over the ${maxBytes} bytes corl reads into memory`,
        'EFBIG',
        file,
      );
    return fs.readFileSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}

/** {@link readUserFile} as UTF-8 text. */
export function readUserText(file: string, maxBytes: number = MAX_INPUT_BYTES): string {
  return readUserFile(file, maxBytes).toString('utf8');
}

/**
 * Open a file a user named for appending and reading back (created when missing, its folder too): refused unless it
 * is, or will be, a regular file outside the kernel's file systems. Returns the descriptor.
 */
export function openUserAppend(file: string): number {
  refuseKernel(file);
  const dir = path.dirname(file);
  if (fs.existsSync(dir) && !fs.statSync(dir).isDirectory())
    throw new NotARegularFile(`a path under ${dir}, which is ${describeStat(fs.statSync(dir))}`, 'ENOTDIR');
  fs.mkdirSync(dir, { recursive: true });
  return naming(file, () => openRegular(file, fs.constants.O_RDWR | fs.constants.O_APPEND | fs.constants.O_CREAT));
}

/** The longest file name (one path component) Linux file systems hold, in bytes (NAME_MAX). */
const MAX_NAME_BYTES = 255;
/** The longest path the kernel takes, in bytes (PATH_MAX less its terminating NUL). */
const MAX_PATH_BYTES = 4095;

/** Why a path that does not exist yet cannot be created: a name or the path is too long, or its nearest existing ancestor is not a folder. */
function creatable(file: string): string | undefined {
  const full = path.resolve(file);
  // A name or path too long for the file system is found before anything is created on the way to it.
  const long = full.split(path.sep).find((name) => Buffer.byteLength(name) > MAX_NAME_BYTES);
  if (long !== undefined)
    return `a path with a name of ${Buffer.byteLength(long)} bytes (${JSON.stringify(long.slice(0, 24) + '…')}), more than the ${MAX_NAME_BYTES} a file name may have`;
  if (Buffer.byteLength(full) > MAX_PATH_BYTES)
    return `a path of ${Buffer.byteLength(full)} bytes, more than the ${MAX_PATH_BYTES} a path may have`;
  let up = path.dirname(full);
  while (!fs.existsSync(up) && path.dirname(up) !== up) up = path.dirname(up);
  const parent = fs.statSync(up);
  return parent.isDirectory() ? undefined : `a path under ${up}, which is ${describeStat(parent)}`;
}

/**
 * Why `file` cannot be read as a regular file (it is a FIFO, a device, a socket, a folder, a symlink to
 * one, or a file of a kernel file system), or undefined when it can. Checks without opening it: for
 * files that another reader opens (Node's `require`), where a FIFO would block that reader for ever.
 */
export function inputProblem(file: string): string | undefined {
  const kfs = kernelFileSystem(file);
  if (kfs) return `a file of the kernel's ${kfs} file system, not a data file`;
  return regularFileProblem(fs.statSync(file));
}

/** Why a path cannot be a regular file a user's output goes to, or undefined when it can (it may not exist yet). */
export function outputProblem(file: string): string | undefined {
  return outputPathProblem(file, 'file');
}

/** Why a path cannot be a folder a user's outputs go to, or undefined when it can (it may not exist yet). */
export function outputFolderProblem(dir: string): string | undefined {
  return outputPathProblem(dir, 'folder');
}

function outputPathProblem(p: string, want: 'file' | 'folder'): string | undefined {
  const kfs = kernelFileSystem(p);
  if (kfs)
    return want === 'file'
      ? `a file of the kernel's ${kfs} file system, not a data file`
      : `a folder of the kernel's ${kfs} file system, not one for data`;
  let st: fs.Stats;
  try {
    st = fs.statSync(p);
  } catch {
    return creatable(p);
  }
  return (want === 'file' ? st.isFile() : st.isDirectory()) ? undefined : describeStat(st);
}
