// Runtime figures of this process for `diagnostics`: uptime, memory, CPU, event-loop lag.

import { type IntervalHistogram, monitorEventLoopDelay, performance } from 'node:perf_hooks';

const WINDOW_MS = 10_000;

export interface LoopLag {
  window_s: number;
  mean_ms: number;
  p50_ms: number;
  p99_ms: number;
  max_ms: number;
  /** Share of the window the event loop was busy (0..1). */
  utilization: number;
}

/** Event-loop delay over rolling 10 s windows (the last complete one is reported). */
export class RuntimeMonitor {
  readonly startedAt = Date.now();
  private readonly histogram: IntervalHistogram = monitorEventLoopDelay({ resolution: 10 });
  private elu = performance.eventLoopUtilization();
  private last: LoopLag | undefined;
  private readonly timer: NodeJS.Timeout;

  constructor() {
    this.histogram.enable();
    this.timer = setInterval(() => this.roll(), WINDOW_MS);
    this.timer.unref();
  }

  private summary(): LoopLag {
    const ms = (ns: number) => Math.round((Number.isFinite(ns) ? ns : 0) / 1e4) / 100;
    const h = this.histogram;
    return {
      window_s: WINDOW_MS / 1000,
      mean_ms: ms(h.mean),
      p50_ms: ms(h.percentile(50)),
      p99_ms: ms(h.percentile(99)),
      max_ms: ms(h.max),
      utilization: Math.round(performance.eventLoopUtilization(this.elu).utilization * 1000) / 1000,
    };
  }

  private roll(): void {
    this.last = this.summary();
    this.histogram.reset();
    this.elu = performance.eventLoopUtilization();
  }

  eventLoopLag(): LoopLag {
    return this.last ?? this.summary();
  }

  snapshot(): Record<string, unknown> {
    const memory = process.memoryUsage();
    const cpu = process.cpuUsage();
    return {
      pid: process.pid,
      uptime_s: Math.round((Date.now() - this.startedAt) / 1000),
      process_uptime_s: Math.round(process.uptime()),
      node_version: process.version,
      memory: {
        rss_bytes: memory.rss,
        heap_used_bytes: memory.heapUsed,
        heap_total_bytes: memory.heapTotal,
        external_bytes: memory.external,
        array_buffers_bytes: memory.arrayBuffers,
      },
      cpu: { user_ms: Math.round(cpu.user / 1000), system_ms: Math.round(cpu.system / 1000) },
      event_loop_lag: this.eventLoopLag(),
    };
  }

  stop(): void {
    clearInterval(this.timer);
    this.histogram.disable();
  }
}
