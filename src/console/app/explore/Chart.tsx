/**
 * ECharts with only what the console draws (bar, line, heatmap; grid, tooltip, mark line) on the
 * SVG renderer: crisp at any zoom, printable, and its marks countable in tests. This module is only
 * reached through the lazily loaded explore and search pages, so the library is not in the first load.
 */
import { BarChart, HeatmapChart, LineChart } from 'echarts/charts';
import { GridComponent, MarkLineComponent, TooltipComponent } from 'echarts/components';
import { type ComposeOption, init, use } from 'echarts/core';
import type { BarSeriesOption, HeatmapSeriesOption, LineSeriesOption } from 'echarts/charts';
import type { GridComponentOption, MarkLineComponentOption, TooltipComponentOption } from 'echarts/components';
import { SVGRenderer } from 'echarts/renderers';
import { useEffect, useRef } from 'react';

use([BarChart, LineChart, HeatmapChart, GridComponent, TooltipComponent, MarkLineComponent, SVGRenderer]);

export type ChartOption = ComposeOption<
  BarSeriesOption | LineSeriesOption | HeatmapSeriesOption | GridComponentOption | TooltipComponentOption | MarkLineComponentOption
>;

/** The marks' colours: the console's accent, and a second one that differs in lightness too (not by hue alone). */
export const MARK = '#0b5fd6';
export const MARK_2 = '#e0a100';
export const AXIS = '#57606a';

/**
 * One chart, described for screen readers by `label` (the page also states its numbers in text or a
 * table). Drawn without animation: the picture is the data at once.
 */
export function Chart({ option, label, height = 280, testId }: { option: ChartOption; label: string; height?: number; testId?: string }) {
  const element = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const chart = init(element.current!, null, { renderer: 'svg' });
    chart.setOption({ animation: false, textStyle: { color: AXIS }, tooltip: { confine: true }, ...option });
    const resize = new ResizeObserver(() => chart.resize());
    resize.observe(element.current!);
    return () => {
      resize.disconnect();
      chart.dispose();
    };
  }, [option]);
  return <div ref={element} className="chart" role="img" aria-label={label} style={{ height }} data-testid={testId} />;
}
