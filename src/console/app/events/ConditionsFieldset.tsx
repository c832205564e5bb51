import { useId } from 'react';
import { CONDITION_OPS, type ConditionOp, type ConditionRow, MAX_CONDITIONS, newRow, valueHint, withOp } from './condition-rows.js';

/**
 * A rule's conditions, one row each (field, operator, value), added and removed in place. `problem`
 * is the server's refusal; when it names a row (`match.conditions[1]…`), it shows beside that row
 * and marks its inputs invalid.
 */
export function ConditionsFieldset({
  rows,
  onChange,
  problem,
  problemRow,
}: {
  rows: ConditionRow[];
  onChange: (rows: ConditionRow[]) => void;
  problem?: string;
  problemRow?: number;
}) {
  const id = useId();
  const change = (index: number, row: ConditionRow) => onChange(rows.map((r, i) => (i === index ? row : r)));
  return (
    <fieldset className="conditions">
      <legend>Conditions on the event's data (all must hold; none: every event)</legend>
      {rows.map((row, index) => {
        const invalid = index === problemRow;
        const errorId = `${id}-error-${index}`;
        const described = invalid ? { 'aria-invalid': true, 'aria-describedby': errorId } : {};
        const n = index + 1;
        return (
          <div className="condition" key={index} role="group" aria-label={`Condition ${n}`}>
            <label>
              Field {n}
              <input
                value={row.field}
                required
                maxLength={100}
                placeholder="e.g. disposition"
                onChange={(e) => change(index, { ...row, field: e.target.value })}
                {...described}
              />
            </label>
            <label>
              Operator {n}
              <select value={row.op} onChange={(e) => change(index, withOp(row, e.target.value as ConditionOp))} {...described}>
                {Object.entries(CONDITION_OPS).map(([op, label]) => (
                  <option key={op} value={op}>
                    {label}
                  </option>
                ))}
              </select>
            </label>
            <label>
              Value {n}
              {row.op === 'exists' ? (
                <select value={row.value} onChange={(e) => change(index, { ...row, value: e.target.value })} {...described}>
                  <option value="true">yes (present)</option>
                  <option value="false">no (absent or null)</option>
                </select>
              ) : (
                <input
                  value={row.value}
                  maxLength={2000}
                  placeholder={valueHint(row.op)}
                  onChange={(e) => change(index, { ...row, value: e.target.value })}
                  {...described}
                />
              )}
            </label>
            <button type="button" onClick={() => onChange(rows.filter((_, i) => i !== index))}>
              Remove condition {n}
            </button>
            {invalid && (
              <p id={errorId} className="problem condition-problem">
                {problem}
              </p>
            )}
          </div>
        );
      })}
      <button type="button" disabled={rows.length >= MAX_CONDITIONS} onClick={() => onChange([...rows, newRow()])}>
        Add a condition
      </button>
      {rows.length >= MAX_CONDITIONS && <span className="note"> A rule holds at most {MAX_CONDITIONS} conditions.</span>}
    </fieldset>
  );
}
