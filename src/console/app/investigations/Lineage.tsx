import type { ConsoleInvestigationQuery } from '../../../generated/console.js';
import { formatDate } from './format.js';

type Provenance = NonNullable<NonNullable<ConsoleInvestigationQuery['investigation']>['provenance']>;
type Leg = Provenance['legs'][number];

/** The lineage reads left to right: how the actor got in, as whom, what ran, what it did on the network. */
const STAGE_ORDER = ['access', 'identity', 'execution', 'collection', 'lateral', 'command_and_control', 'exfiltration'];
const STAGE_NAMES: Record<string, string> = {
  access: 'Access',
  identity: 'Identity',
  execution: 'Execution',
  collection: 'Network: collection',
  lateral: 'Network: lateral movement',
  command_and_control: 'Network: command and control',
  exfiltration: 'Network: exfiltration',
};
const CONFIDENCE: Record<string, string> = { directly_observed: 'Directly observed', inferred: 'Inferred', not_established: 'Not established' };

const stageRank = (leg: Leg) => {
  const rank = STAGE_ORDER.indexOf(leg.stage);
  return rank === -1 ? STAGE_ORDER.length : rank;
};

/** The provenance legs drawn as a chain (access → identity → execution → network), each with its actors and ATT&CK techniques. */
export function Lineage({ provenance }: { provenance: Provenance | null }) {
  if (!provenance || !provenance.available) {
    return <p>No provenance: {provenance?.unavailableReason ?? 'the analysis did not establish one.'}</p>;
  }
  const legs = [...provenance.legs].sort((a, b) => stageRank(a) - stageRank(b));
  return (
    <>
      {provenance.headline && <p>{provenance.headline}</p>}
      <p className="note">{Math.round(provenance.completeness * 100)}% of the legs directly observed.</p>
      <ol className="lineage">
        {legs.map((leg, index) => (
          <li key={index} className={`leg leg-${leg.confidence}`}>
            <p className="leg-stage">{STAGE_NAMES[leg.stage] ?? leg.stage}</p>
            <h3>{leg.title}</h3>
            <p>{leg.headline}</p>
            <p className="note">
              {CONFIDENCE[leg.confidence] ?? leg.confidence}
              {leg.at && `, ${formatDate(leg.at)}`}
            </p>
            {leg.gapReason && <p className="note">Gap: {leg.gapReason}</p>}
            {leg.actors.length > 0 && (
              <ul className="actors" aria-label="Actors">
                {leg.actors.map((actor, i) => (
                  <li key={i}>
                    <span className="actor-kind">{actor.kind.replace(/_/g, ' ')}</span> {actor.label}
                    {actor.detail && <span className="note"> ({actor.detail})</span>}
                  </li>
                ))}
              </ul>
            )}
            {leg.attack.length > 0 && (
              <ul className="attack" aria-label="ATT&CK techniques">
                {leg.attack.map((technique) => (
                  <li key={technique.techniqueId}>
                    <abbr title={technique.tactic}>{technique.techniqueId}</abbr> {technique.technique}
                  </li>
                ))}
              </ul>
            )}
          </li>
        ))}
      </ol>
    </>
  );
}
