import { useMemo } from 'react';
import { ConsoleExploreOrganizationDocument, type ConsoleExploreOrganizationQuery } from '../../../generated/console.js';
import { QueryView } from '../query-view.js';
import { Link } from '../router.js';
import { useQuery } from '../use-query.js';
import { Chart, type ChartOption, MARK, MARK_2 } from './Chart.js';
import { EXPLORE_RANGES, type ExploreProps, exploreRequest } from './ExploreRoutes.js';
import { formatBytes, formatNumber } from './format.js';
import { RangePicker } from './RangePicker.js';
import { DataTable } from '../data-table.js';

type Answer = ConsoleExploreOrganizationQuery;

/** One organization: when (day × hour), how regularly (gap CDF, beacons), how much, from where, and how. */
export function OrganizationPage({ tenant, range, onRange, org }: ExploreProps & { org: string }) {
  const { state, reload } = useQuery(ConsoleExploreOrganizationDocument, { org, request: exploreRequest(tenant, range, 20) });
  return (
    <article>
      <Link to={`/explore?range=${range}`}>← All organizations</Link>
      <h1>{org}</h1>
      <div className="filters">
        <RangePicker value={range} choices={EXPLORE_RANGES} onChange={onRange} />
      </div>
      <QueryView state={state} what="The organization" reload={reload}>
        {(answer) => (
          <>
            <p>{answer.exploreOrganization.readout}</p>
            <Temporal answer={answer.exploreOrgTemporal} />
            <Cadence answer={answer.exploreOrgCadence} />
            <Transfer answer={answer.exploreOrgTransfer} />
            <Reach answer={answer.exploreOrgReach} />
            <Access answer={answer.exploreOrgAccess} />
          </>
        )}
      </QueryView>
    </article>
  );
}

function Section({ id, title, readout, children }: { id: string; title: string; readout: string; children: React.ReactNode }) {
  return (
    <section aria-labelledby={id} className="explore-view">
      <h2 id={id}>{title}</h2>
      <p>{readout}</p>
      {children}
    </section>
  );
}

/** Day × hour: a cell per hour with flows, its opacity the share of the busiest hour. */
function Temporal({ answer }: { answer: Answer['exploreOrgTemporal'] }) {
  const option = useMemo<ChartOption>(() => {
    const busy = answer.cells.filter((c) => c.value > 0);
    const max = Math.max(1, ...busy.map((c) => c.value));
    return {
      grid: { left: 64, right: 16, top: 8, bottom: 40 },
      xAxis: { type: 'category', data: answer.cols, name: 'Hour (UTC)', nameLocation: 'middle', nameGap: 26, splitArea: { show: true } },
      yAxis: { type: 'category', data: answer.rows, splitArea: { show: true } },
      series: [
        {
          type: 'heatmap',
          data: busy.map((c) => ({
            value: [answer.cols.indexOf(c.col), answer.rows.indexOf(c.row), c.value],
            itemStyle: { color: MARK, opacity: 0.25 + (0.75 * c.value) / max },
          })),
        },
      ],
    };
  }, [answer]);
  return (
    <Section id="temporal" title="When: day × hour" readout={answer.readout}>
      <Chart
        option={option}
        label={`Flows per day and hour: ${answer.total} flows in ${answer.cells.filter((c) => c.value > 0).length} hours`}
        testId="chart-temporal"
      />
    </Section>
  );
}

/** The cumulative distribution of gaps between sessions, on a log axis; the beacon subset beside it. */
function Cadence({ answer }: { answer: Answer['exploreOrgCadence'] }) {
  const option = useMemo<ChartOption>(
    () => ({
      grid: { left: 56, right: 24, top: 16, bottom: 40 },
      xAxis: { type: 'log', name: 'Gap (s)', nameLocation: 'middle', nameGap: 26 },
      yAxis: { type: 'value', min: 0, max: 1, name: 'Share of gaps' },
      tooltip: { trigger: 'axis' },
      series: [
        {
          type: 'line',
          step: 'end',
          symbol: 'circle',
          symbolSize: 7,
          itemStyle: { color: MARK },
          data: answer.cdf.map((p) => [Math.max(p.gapSecs, 0.001), p.fraction]),
          ...(answer.beacon?.intervalMs
            ? { markLine: { symbol: 'none', lineStyle: { color: MARK_2, type: 'dashed' }, data: [{ xAxis: answer.beacon.intervalMs / 1000 }] } }
            : {}),
        },
      ],
    }),
    [answer],
  );
  const beacon = answer.beacon;
  return (
    <Section id="cadence" title="How regularly: gaps between sessions" readout={answer.readout}>
      {answer.cdf.length > 0 ? (
        <Chart
          option={option}
          label={`Cumulative distribution of gaps, ${answer.cdf.length} points, median ${formatNumber(answer.medianGapSecs)} s`}
          testId="chart-cadence"
        />
      ) : (
        <p className="note">Too few sessions for a distribution.</p>
      )}
      <p>
        Beacon subset:{' '}
        {beacon && beacon.flows > 0
          ? `${beacon.flows} flows from ${beacon.sources} sources flagged as beacons${beacon.intervalMs ? `, every ${formatNumber(beacon.intervalMs / 1000)} s (dashed line)` : ''}.`
          : 'no flows flagged as beacons.'}
      </p>
    </Section>
  );
}

const barOption = (names: string[], values: number[], colors: string[] = [MARK], format: (v: number) => string = String): ChartOption => ({
  grid: { left: 120, right: 24, top: 8, bottom: 28 },
  xAxis: { type: 'value', axisLabel: { formatter: format } },
  yAxis: { type: 'category', data: [...names].reverse() },
  tooltip: { trigger: 'axis' },
  series: [{ type: 'bar', data: [...values].reverse().map((value, i) => ({ value, itemStyle: { color: colors[(values.length - 1 - i) % colors.length] } })) }],
});

function Transfer({ answer }: { answer: Answer['exploreOrgTransfer'] }) {
  const facts = answer.transfer;
  const option = useMemo(() => (facts ? barOption(['Upload', 'Download'], [facts.up, facts.down], [MARK, MARK_2], formatBytes) : undefined), [facts]);
  return (
    <Section id="transfer" title="How much: transfer" readout={answer.readout}>
      {facts && option && (
        <>
          <Chart option={option} label={`Upload ${formatBytes(facts.up)}, download ${formatBytes(facts.down)}`} height={140} testId="chart-transfer" />
          <dl className="facts">
            <dt>Bytes per flow (mean)</dt>
            <dd>{facts.chunkBytesMean == null ? '—' : formatBytes(facts.chunkBytesMean)}</dd>
            <dt>Variation of bytes per flow</dt>
            <dd>{formatNumber(facts.chunkCv)}</dd>
            <dt>Duration per flow (mean, s)</dt>
            <dd>{formatNumber(facts.durationMean)}</dd>
            <dt>Payload entropy (bits/byte)</dt>
            <dd>{formatNumber(facts.entropyMean)}</dd>
          </dl>
        </>
      )}
    </Section>
  );
}

function Reach({ answer }: { answer: Answer['exploreOrgReach'] }) {
  const option = useMemo(
    () =>
      barOption(
        answer.sources.map((s) => s.ip ?? '(unknown)'),
        answer.sources.map((s) => s.upload + s.download),
        [MARK],
        formatBytes,
      ),
    [answer],
  );
  return (
    <Section id="reach" title="From where: internal sources" readout={answer.readout}>
      {answer.sources.length > 0 && (
        <Chart
          option={option}
          label={`Bytes per internal source, ${answer.sources.length} of ${answer.sourceCount} sources`}
          height={Math.max(120, answer.sources.length * 26 + 40)}
          testId="chart-reach"
        />
      )}
      {answer.processes.length > 0 && (
        <DataTable caption="Source processes" columns={['Process', 'Flows', 'Sources']} showCaption>
          {answer.processes.map((p) => (
            <tr key={p.name ?? '—'}>
              <td>{p.name ?? '(unknown)'}</td>
              <td>{p.flows}</td>
              <td>{p.sources}</td>
            </tr>
          ))}
        </DataTable>
      )}
    </Section>
  );
}

function Access({ answer }: { answer: Answer['exploreOrgAccess'] }) {
  const groups = [
    { key: 'ports', title: 'Ports', rows: answer.ports },
    { key: 'protocols', title: 'Protocols', rows: answer.protocols },
    { key: 'apps', title: 'Applications', rows: answer.apps },
    { key: 'tls', title: 'TLS versions', rows: answer.tlsVersions },
  ];
  return (
    <Section id="access" title="How: ports, protocols, applications, TLS" readout={answer.readout}>
      <div className="chart-grid">
        {groups.map((g) => (
          <AccessChart key={g.key} id={g.key} title={g.title} rows={g.rows} />
        ))}
      </div>
    </Section>
  );
}

function AccessChart({ id, title, rows }: { id: string; title: string; rows: Answer['exploreOrgAccess']['ports'] }) {
  const option = useMemo(
    () =>
      barOption(
        rows.map((r) => String(r.name)),
        rows.map((r) => r.flows),
      ),
    [rows],
  );
  return (
    <figure>
      <figcaption>{title} by flows</figcaption>
      {rows.length > 0 ? (
        <Chart
          option={option}
          label={`${title}: ${rows.map((r) => `${String(r.name)} ${r.flows} flows`).join(', ')}`}
          height={Math.max(100, rows.length * 26 + 40)}
          testId={`chart-access-${id}`}
        />
      ) : (
        <p className="note">None.</p>
      )}
    </figure>
  );
}
