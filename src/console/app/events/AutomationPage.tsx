import { type FormEvent, useState } from 'react';
import {
  type ConsoleAutomationRuleFieldsFragment,
  ConsoleAutomationRulesDocument,
  ConsoleAutomationRunsDocument,
  ConsoleDeleteAutomationRuleDocument,
  ConsoleEventTopicsDocument,
  ConsoleSaveAutomationRuleDocument,
  type SaveAutomationRuleInput,
} from '../../../generated/console.js';
import { request } from '../api.js';
import { DeleteButton } from '../delete-button.js';
import { formatDate } from '../investigations/format.js';
import { can } from '../permissions.js';
import { Problem, QueryView, useAction } from '../query-view.js';
import { useQuery } from '../use-query.js';
import type { EventsProps } from './EventsRoutes.js';
import { DataTable } from '../data-table.js';
import { type ConditionRow, conditionOf, rowNamedIn, rowOf } from './condition-rows.js';
import { ConditionsFieldset } from './ConditionsFieldset.js';

type Rule = ConsoleAutomationRuleFieldsFragment;
type Topic = { topic: string; kinds: string[] };

const ACTIONS = { webhook: 'Call a webhook', collector_update: 'Update the collector the event names' } as const;

/** The chosen tenant's rules: what they match, what they do, on or off, and their runs; admins create, edit, switch and delete them. */
export function AutomationPage({ user, tenant }: EventsProps) {
  const rules = useQuery(ConsoleAutomationRulesDocument, { customerId: tenant.customerId });
  const topics = useQuery(ConsoleEventTopicsDocument, { customerId: tenant.customerId });
  const [editing, setEditing] = useState<Rule | 'new'>();
  const [secret, setSecret] = useState<string>();
  const mayWrite = can(user, 'automation.write');
  const topicList = topics.state.kind === 'done' ? topics.state.data.eventTopics.topics : [];
  const saved = (newSecret: string | null) => {
    setEditing(undefined);
    setSecret(newSecret ?? undefined);
    rules.reload();
  };
  return (
    <>
      <h1>Automation rules</h1>
      {secret && (
        <section aria-label="Webhook signing secret" className="note">
          <p>The webhook's signing secret, shown only now: store it where the receiver verifies signatures.</p>
          <pre className="copyable">{secret}</pre>
        </section>
      )}
      <QueryView state={rules.state} what="The rules" reload={rules.reload}>
        {({ automationRules }) =>
          automationRules.length === 0 ? (
            <p>No rules yet.</p>
          ) : (
            <DataTable caption="Automation rules" columns={['Rule', 'When', 'Then', 'State', 'Actions']} className="rules">
              {automationRules.map((rule) => (
                <RuleRow key={rule.ruleId} rule={rule} mayWrite={mayWrite} onEdit={() => setEditing(rule)} onChanged={rules.reload} />
              ))}
            </DataTable>
          )
        }
      </QueryView>
      {mayWrite && editing === undefined && (
        <button type="button" onClick={() => setEditing('new')}>
          New rule
        </button>
      )}
      {mayWrite && editing !== undefined && (
        <RuleForm
          key={editing === 'new' ? 'new' : editing.ruleId}
          customerId={tenant.customerId}
          rule={editing === 'new' ? undefined : editing}
          topics={topicList}
          onSaved={saved}
          onCancel={() => setEditing(undefined)}
        />
      )}
    </>
  );
}

function RuleRow({ rule, mayWrite, onEdit, onChanged }: { rule: Rule; mayWrite: boolean; onEdit: () => void; onChanged: () => void }) {
  const [showRuns, setShowRuns] = useState(false);
  const { busy, problem, run } = useAction();
  const toggle = async () => {
    if (await run(() => request(ConsoleSaveAutomationRuleDocument, { input: { ruleId: rule.ruleId, enabled: !rule.enabled } }))) onChanged();
  };
  return (
    <>
      <tr>
        <td>{rule.name}</td>
        <td>
          {rule.match.topic}
          {rule.match.kinds.length > 0 ? `: ${rule.match.kinds.join(', ')}` : ' (every kind)'}
          {rule.match.conditions.length > 0 && (
            <div className="note">{rule.match.conditions.map((c) => `${c.field} ${c.op} ${JSON.stringify(c.value)}`).join('; ')}</div>
          )}
        </td>
        <td>
          {ACTIONS[rule.action.type as keyof typeof ACTIONS] ?? rule.action.type}
          {rule.action.url && <div className="note">{rule.action.url}</div>}
        </td>
        <td>{rule.enabled ? 'on' : 'off'}</td>
        <td>
          <span className="actions">
            <button type="button" aria-expanded={showRuns} onClick={() => setShowRuns(!showRuns)}>
              Runs of {rule.name}
            </button>
            {mayWrite && (
              <>
                <button type="button" disabled={busy} onClick={() => void toggle()}>
                  {rule.enabled ? 'Disable' : 'Enable'} {rule.name}
                </button>
                <button type="button" onClick={onEdit}>
                  Edit {rule.name}
                </button>
                <DeleteButton
                  label={`Delete rule ${rule.name}`}
                  onDelete={() => request(ConsoleDeleteAutomationRuleDocument, { ruleId: rule.ruleId }).then(onChanged)}
                />
              </>
            )}
          </span>
          <Problem text={problem && `Not changed: ${problem}`} />
        </td>
      </tr>
      {showRuns && (
        <tr>
          <td colSpan={5}>
            <Runs ruleId={rule.ruleId} name={rule.name} />
          </td>
        </tr>
      )}
    </>
  );
}

function Runs({ ruleId, name }: { ruleId: string; name: string }) {
  const { state, reload } = useQuery(ConsoleAutomationRunsDocument, { ruleId });
  return (
    <QueryView state={state} what="The runs" reload={reload}>
      {({ automationRule }) =>
        automationRule.runs.length === 0 ? (
          <p>No runs yet: {name} has not matched an event.</p>
        ) : (
          <DataTable caption={<>The newest runs of {name}</>} columns={['Started', 'Status', 'Attempts', 'Outcome']} className="runs" showCaption>
            {automationRule.runs.map((r) => (
              <tr key={r.runId}>
                <td>{formatDate(r.createdAt)}</td>
                <td>{r.status}</td>
                <td>{r.attempts}</td>
                <td>{r.error ?? (r.responseCode ? `HTTP ${r.responseCode}` : '—')}</td>
              </tr>
            ))}
          </DataTable>
        )
      }
    </QueryView>
  );
}

/** Creates a rule, or edits one: the topic and its kinds, its conditions, the action, on or off. */
function RuleForm({
  customerId,
  rule,
  topics,
  onSaved,
  onCancel,
}: {
  customerId: string;
  rule?: Rule;
  topics: Topic[];
  onSaved: (secret: string | null) => void;
  onCancel: () => void;
}) {
  const [topic, setTopic] = useState(rule?.match.topic ?? topics[0]?.topic ?? '');
  const [action, setAction] = useState(rule?.action.type ?? 'webhook');
  const [conditions, setConditions] = useState<ConditionRow[]>(() => rule?.match.conditions.map(rowOf) ?? []);
  const { busy, problem, run } = useAction();
  const kinds = topics.find((t) => t.topic === topic)?.kinds ?? [];
  const submit = async (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    const input: SaveAutomationRuleInput = {
      ...(rule ? { ruleId: rule.ruleId } : { customerId }),
      name: String(form.get('name') ?? '').trim(),
      enabled: form.has('enabled'),
      match: {
        topic,
        kinds: kinds.filter((k) => form.has(`kind-${k}`)),
        conditions: conditions.map(conditionOf),
      },
      action: { type: action, ...(action === 'webhook' ? { url: String(form.get('url') ?? '').trim() } : {}) },
    };
    const result = await run(() => request(ConsoleSaveAutomationRuleDocument, { input }));
    if (result) onSaved(result.saveAutomationRule.secret);
  };
  return (
    <section aria-labelledby="rule-form">
      <h2 id="rule-form">{rule ? `Edit ${rule.name}` : 'New rule'}</h2>
      <form className="form-grid" onSubmit={(event) => void submit(event)}>
        <label>
          Name
          <input name="name" required maxLength={200} defaultValue={rule?.name} />
        </label>
        <label>
          Topic
          <select value={topic} onChange={(event) => setTopic(event.target.value)}>
            {topics.map((t) => (
              <option key={t.topic} value={t.topic}>
                {t.topic}
              </option>
            ))}
          </select>
        </label>
        <fieldset>
          <legend>Kinds (none checked: every kind)</legend>
          {kinds.map((k) => (
            <label className="check" key={`${topic}-${k}`}>
              <input type="checkbox" name={`kind-${k}`} defaultChecked={rule?.match.topic === topic && rule.match.kinds.includes(k)} /> {k}
            </label>
          ))}
        </fieldset>
        <ConditionsFieldset rows={conditions} onChange={setConditions} problem={problem} problemRow={rowNamedIn(problem)} />
        <label>
          Action
          <select value={action} onChange={(event) => setAction(event.target.value)}>
            {Object.entries(ACTIONS).map(([type, label]) => (
              <option key={type} value={type}>
                {label}
              </option>
            ))}
          </select>
        </label>
        {action === 'webhook' && (
          <label>
            Webhook URL
            <input name="url" type="url" required maxLength={2048} defaultValue={rule?.action.url ?? ''} placeholder="https://hooks.example.com/breach" />
          </label>
        )}
        <label className="check">
          <input type="checkbox" name="enabled" defaultChecked={rule?.enabled ?? true} /> On
        </label>
        <div className="actions">
          <button type="submit" disabled={busy}>
            {rule ? 'Save rule' : 'Create rule'}
          </button>
          <button type="button" onClick={onCancel}>
            Cancel
          </button>
        </div>
      </form>
      <Problem text={problem && `The rule was not saved: ${problem}`} />
    </section>
  );
}
