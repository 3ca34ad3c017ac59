// Worker-thread entry of one shard: builds a ShardEngine from workerData and runs jobs in order.
import { parentPort, workerData } from 'node:worker_threads';
import { ShardEngine, type EngineInit } from './engine';
import { runJob, toWire, type ShardJob } from './shard';

const engine = new ShardEngine(workerData as EngineInit);
let queue: Promise<void> = Promise.resolve();

parentPort!.on('message', (m: { id: number; job: ShardJob }) => {
  queue = queue.then(async () => {
    try {
      const result = await runJob(engine, m.job);
      // m and v are not kept by the engine: hand their memory over instead of copying it.
      const transfer =
        m.job.kind === 'step' || m.job.kind === 'apply'
          ? [...(result as { m: Float32Array[] }).m, ...(result as { v: Float32Array[] }).v]
              .filter((a) => a.byteOffset === 0 && a.buffer.byteLength === a.byteLength)
              .map((a) => a.buffer as ArrayBuffer)
          : [];
      parentPort!.postMessage({ id: m.id, ok: true, result }, [...new Set(transfer)]);
    } catch (e) {
      parentPort!.postMessage({ id: m.id, ok: false, error: toWire(e) });
    }
  });
});
