// A real single-node Slurm for the tests: munged, slurmctld and slurmd of the machine's packages
// (Debian's munge, slurmctld, slurmd, slurm-client), each started as root in the foreground with a
// key, a slurm.conf and state folders generated in a temporary folder, on free ports, so nothing of
// the machine's own Slurm or munge configuration is read or changed. Stopped (jobs cancelled,
// daemons ended by their pids, the folder removed) by `stop`.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';

/** What .ci/run installs, and what a machine without Slurm is told to install. */
export const SLURM_INSTALL = 'apt-get install -y munge slurmctld slurmd slurm-client';

const DAEMONS = ['munged', 'slurmctld', 'slurmd'] as const;
const CLIENTS = ['sbatch', 'squeue', 'scontrol', 'scancel', 'sinfo'] as const;

/** The path of a program in PATH or the sbin folders (daemons live in /usr/sbin), or null. */
function which(name: string): string | null {
  const dirs = [...(process.env.PATH ?? '').split(':'), '/usr/sbin', '/sbin', '/usr/local/sbin'];
  for (const d of dirs.filter(Boolean)) {
    const p = path.join(d, name);
    try {
      fs.accessSync(p, fs.constants.X_OK);
      return p;
    } catch {
      // not here
    }
  }
  return null;
}

/** The programs of Slurm and munge that are missing (empty when a cluster can start). */
export function missingSlurm(): string[] {
  return [...DAEMONS, ...CLIENTS, 'munge'].filter((p) => which(p) === null);
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(port));
    });
  });
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** A running single-node cluster. */
export class SlurmCluster {
  private readonly daemons: ChildProcess[] = [];
  private constructor(
    readonly dir: string,
    /** The environment a client command needs (SLURM_CONF, and PATH with node's folder). */
    readonly env: NodeJS.ProcessEnv,
  ) {}

  /** Generate the configuration, start munged, slurmctld and slurmd, and wait for the node to be idle. */
  static async start(): Promise<SlurmCluster> {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'corl-slurm-'));
    fs.chmodSync(dir, 0o755);
    const host = os.hostname().split('.')[0]!;
    const [ctld, slurmd] = [await freePort(), await freePort()];
    for (const d of ['munge', 'state', 'spool']) fs.mkdirSync(path.join(dir, d), { mode: 0o700 });
    fs.writeFileSync(path.join(dir, 'munge', 'munge.key'), randomBytes(1024), { mode: 0o600 });
    fs.writeFileSync(path.join(dir, 'plugstack.conf'), '');
    const socket = path.join(dir, 'munge', 'munge.socket');
    const conf = path.join(dir, 'slurm.conf');
    fs.writeFileSync(
      conf,
      [
        'ClusterName=corltest',
        `SlurmctldHost=${host}(127.0.0.1)`,
        `SlurmctldPort=${ctld}`,
        `SlurmdPort=${slurmd}`,
        'AuthType=auth/munge',
        'CredType=cred/munge',
        `AuthInfo=socket=${socket}`,
        'SlurmUser=root',
        'SlurmdUser=root',
        `StateSaveLocation=${path.join(dir, 'state')}`,
        `SlurmdSpoolDir=${path.join(dir, 'spool')}`,
        `SlurmctldPidFile=${path.join(dir, 'slurmctld.pid')}`,
        `SlurmdPidFile=${path.join(dir, 'slurmd.pid')}`,
        `SlurmctldLogFile=${path.join(dir, 'slurmctld.log')}`,
        `SlurmdLogFile=${path.join(dir, 'slurmd.log')}`,
        `PlugStackConfig=${path.join(dir, 'plugstack.conf')}`,
        'ProctrackType=proctrack/linuxproc',
        'TaskPlugin=task/none',
        'JobAcctGatherType=jobacct_gather/none',
        'AccountingStorageType=accounting_storage/none',
        'JobCompType=jobcomp/none',
        'MpiDefault=none',
        'SchedulerType=sched/backfill',
        'SelectType=select/cons_tres',
        'SelectTypeParameters=CR_Core',
        'ReturnToService=2',
        'MinJobAge=600',
        'KillWait=5',
        // four CPUs whatever the machine has: two shards of --cpus-per-task=2 run side by side
        'SlurmdParameters=config_overrides',
        `NodeName=${host} NodeAddr=127.0.0.1 CPUs=4 State=UNKNOWN`,
        `PartitionName=debug Nodes=${host} Default=YES MaxTime=INFINITE State=UP`,
        '',
      ].join('\n'),
    );
    // nothing of a Slurm the tests themselves may run under (SLURM_JOB_ID, SLURM_PARTITION, …) reaches this one
    const outer = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('SLURM_')));
    const env = {
      ...outer,
      SLURM_CONF: conf,
      PATH: `${path.dirname(process.execPath)}:${process.env.PATH ?? '/usr/bin:/bin'}`,
    };
    const cluster = new SlurmCluster(dir, env);
    try {
      cluster.daemon('munged', [
        '-F',
        '-f',
        `--socket=${socket}`,
        `--key-file=${path.join(dir, 'munge', 'munge.key')}`,
        `--log-file=${path.join(dir, 'munge', 'munged.log')}`,
        `--pid-file=${path.join(dir, 'munge', 'munged.pid')}`,
        `--seed-file=${path.join(dir, 'munge', 'munged.seed')}`,
      ]);
      await cluster.until('munged to answer', () => fs.existsSync(socket));
      cluster.daemon('slurmctld', ['-D', '-f', conf]);
      cluster.daemon('slurmd', ['-D', '-f', conf, '-N', host]);
      await cluster.until('the node to be idle', () => /^idle/m.test(cluster.run('sinfo', ['-h', '-o', '%T']).stdout));
      return cluster;
    } catch (e) {
      await cluster.stop();
      throw e;
    }
  }

  private daemon(name: (typeof DAEMONS)[number], args: string[]): void {
    const log = fs.openSync(path.join(this.dir, `${name}.out`), 'a');
    const child = spawn(which(name)!, args, { stdio: ['ignore', log, log], env: this.env });
    fs.closeSync(log);
    this.daemons.push(child);
  }

  /** Run a client command (sbatch, scontrol, …) against this cluster. */
  run(cmd: string, args: string[], cwd?: string): { status: number | null; stdout: string; stderr: string } {
    const r = spawnSync(which(cmd) ?? cmd, args, {
      encoding: 'utf8',
      env: this.env,
      timeout: 60000,
      ...(cwd ? { cwd } : {}),
    });
    return { status: r.status, stdout: r.stdout ?? '', stderr: r.stderr ?? '' };
  }

  /** Poll `ok` every 200 ms; after `limitMs` (a guard against a hang, not a speed check), fail with the daemons' logs. */
  async until(what: string, ok: () => boolean, limitMs = 120000): Promise<void> {
    for (let waited = 0; !ok(); waited += 200) {
      const dead = this.daemons.find((d) => d.exitCode !== null || d.signalCode !== null);
      if (dead || waited > limitMs)
        throw new Error(`waiting for ${what}: ${dead ? `${dead.spawnfile} exited` : 'no end'}\n${this.logs()}`);
      await sleep(200);
    }
  }

  /**
   * The daemons' logs, for a failure's message: the last 15 lines of each, or, given `about` (a job
   * id, say), every line that mentions it and the 15 before the end.
   */
  logs(about?: string): string {
    return ['munged.out', 'slurmctld.log', 'slurmd.log', 'slurmctld.out', 'slurmd.out']
      .map((f) => path.join(this.dir, f))
      .filter((f) => fs.existsSync(f))
      .map((f) => {
        const lines = fs.readFileSync(f, 'utf8').split('\n');
        const tail = lines.slice(-15);
        const named = about === undefined ? [] : lines.slice(0, -15).filter((l) => l.includes(about));
        return `--- ${path.basename(f)}\n${[...named, ...(named.length ? ['…'] : []), ...tail].join('\n')}`;
      })
      .join('\n');
  }

  /** Cancel every job, end the daemons (by their pids, last started first) and remove the folder. */
  async stop(): Promise<void> {
    if (this.daemons.some((d) => d.spawnfile.endsWith('slurmctld') && d.exitCode === null)) {
      this.run('scancel', ['--user', os.userInfo().username]);
      await sleep(1000);
    }
    for (const d of [...this.daemons].reverse()) {
      if (d.exitCode === null && d.signalCode === null) {
        const gone = new Promise<void>((resolve) => d.once('exit', () => resolve()));
        d.kill('SIGTERM');
        await Promise.race([gone, sleep(10000)]);
        if (d.exitCode === null && d.signalCode === null) d.kill('SIGKILL');
      }
    }
    fs.rmSync(this.dir, { recursive: true, force: true });
  }
}
