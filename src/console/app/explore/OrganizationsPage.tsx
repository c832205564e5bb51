import { useMemo } from 'react';
import { ConsoleExploreOrganizationsDocument, type ConsoleExploreOrganizationsQuery } from '../../../generated/console.js';
import { QueryView } from '../query-view.js';
import { Link } from '../router.js';
import { useQuery } from '../use-query.js';
import { Chart, type ChartOption, MARK, MARK_2 } from './Chart.js';
import { EXPLORE_RANGES, type ExploreProps, exploreRequest } from './ExploreRoutes.js';
import { formatBytes } from './format.js';
import { RangePicker } from './RangePicker.js';
import { DataTable } from '../data-table.js';

type Row = ConsoleExploreOrganizationsQuery['exploreOrganizations']['organizations'][number];

const orgName = (row: Row) => row.name ?? '(unattributed)';

/** The organizations reached by egress flows, ranked by bytes: a stacked bar per organization (upload, download) and the table. */
export function OrganizationsPage({ tenant, range, onRange }: ExploreProps) {
  const { state, reload } = useQuery(ConsoleExploreOrganizationsDocument, { request: exploreRequest(tenant, range, 25) });
  return (
    <>
      <h1>Explore: organizations</h1>
      <div className="filters">
        <RangePicker value={range} choices={EXPLORE_RANGES} onChange={onRange} />
      </div>
      <QueryView state={state} what="The organizations" reload={reload}>
        {({ exploreOrganizations: answer }) => (
          <>
            <p>{answer.readout}</p>
            {answer.organizations.length > 0 && <Ranking rows={answer.organizations} range={range} />}
          </>
        )}
      </QueryView>
    </>
  );
}

function Ranking({ rows, range }: { rows: Row[]; range: string }) {
  const option = useMemo<ChartOption>(() => {
    const top = [...rows].reverse(); // the biggest at the top of a horizontal bar chart
    return {
      grid: { left: 160, right: 24, top: 8, bottom: 32 },
      xAxis: { type: 'value', axisLabel: { formatter: (v: number) => formatBytes(v) } },
      yAxis: { type: 'category', data: top.map(orgName) },
      tooltip: { trigger: 'axis' },
      series: [
        { name: 'Upload', type: 'bar', stack: 'bytes', data: top.map((r) => r.upload), itemStyle: { color: MARK } },
        { name: 'Download', type: 'bar', stack: 'bytes', data: top.map((r) => r.download), itemStyle: { color: MARK_2 } },
      ],
    };
  }, [rows]);
  return (
    <>
      <figure>
        <Chart
          option={option}
          label={`Bytes per organization, upload and download stacked, ${rows.length} organizations`}
          height={Math.max(160, rows.length * 28 + 48)}
          testId="chart-organizations"
        />
        <figcaption className="note">Upload (blue, left) and download (amber, right) bytes per organization.</figcaption>
      </figure>
      <DataTable caption="Organizations by bytes" columns={['Organization', 'Bytes', 'Upload', 'Download', 'Flows', 'Sources']}>
        {rows.map((row) => (
          <tr key={orgName(row)}>
            <td>{row.name ? <Link to={`/explore/org/${encodeURIComponent(row.name)}?range=${range}`}>{row.name}</Link> : orgName(row)}</td>
            <td>{formatBytes(row.bytes)}</td>
            <td>{formatBytes(row.upload)}</td>
            <td>{formatBytes(row.download)}</td>
            <td>{row.flows}</td>
            <td>{row.sources}</td>
          </tr>
        ))}
      </DataTable>
    </>
  );
}
