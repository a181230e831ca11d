/** A figure as a tile: its name, its value, and a line more (the dashboard's totals, a session's). */
export function Tile({ name, value, more }: { name: string; value: string; more?: string }) {
  return (
    <li class="tile" aria-label={name}>
      <div class="name">{name}</div>
      <div class="value">{value}</div>
      {more && <div class="more">{more}</div>}
    </li>
  );
}
