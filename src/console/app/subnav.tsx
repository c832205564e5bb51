import { Link } from './router.js';

/** A section's own navigation (Fleet: nodes, devices…; Events: records, automation), the current page marked. */
export function SubNav({ label, items, current }: { label: string; items: { path: string; label: string }[]; current?: string }) {
  return (
    <nav aria-label={label} className="subnav">
      <ul>
        {items.map((item) => (
          <li key={item.path}>
            <Link to={item.path} aria-current={item.path === current ? 'page' : undefined}>
              {item.label}
            </Link>
          </li>
        ))}
      </ul>
    </nav>
  );
}
