import { Worker, type WorkerOptions } from 'node:worker_threads';

/**
 * A worker thread running a TypeScript module. Node 20 applies no loader given by `--import` to
 * a worker's own module (`tsx src/main.ts` included): the thread registers tsx itself before
 * importing it.
 */
export function typescriptWorker(module: URL, options: Omit<WorkerOptions, 'eval'> = {}): Worker {
  const boot = `import('tsx/esm/api').then((tsx) => { tsx.register(); return import(${JSON.stringify(module.href)}); })`;
  return new Worker(boot, { ...options, eval: true });
}
