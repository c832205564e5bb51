import { Worker, type WorkerOptions } from 'node:worker_threads';

/**
 * A worker thread running one of our modules, named without its extension relative to `caller`
 * (the calling module's import.meta.url). Compiled (`npm run build`), the module is JavaScript
 * beside the caller and starts as it is. From source it is TypeScript, and Node 20 applies no
 * loader given by `--import` to a worker's own module (`tsx src/main.ts` included): the thread
 * registers tsx itself before importing it.
 */
export function sourceWorker(name: string, caller: string, options: Omit<WorkerOptions, 'eval'> = {}): Worker {
  const compiled = caller.endsWith('.js');
  const module = JSON.stringify(new URL(`${name}.${compiled ? 'js' : 'ts'}`, caller).href);
  const boot = compiled ? `import(${module})` : `import('tsx/esm/api').then((tsx) => { tsx.register(); return import(${module}); })`;
  return new Worker(boot, { ...options, eval: true });
}
