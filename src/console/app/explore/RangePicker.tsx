import { RANGES, type RangeKey } from './range.js';

export function RangePicker({ value, choices, onChange }: { value: RangeKey; choices: RangeKey[]; onChange: (range: RangeKey) => void }) {
  return (
    <label>
      Time range{' '}
      <select value={value} onChange={(event) => onChange(event.target.value as RangeKey)}>
        {choices.map((key) => (
          <option key={key} value={key}>
            {RANGES[key].label}
          </option>
        ))}
      </select>
    </label>
  );
}
