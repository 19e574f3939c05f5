export function StatCard(props: { label: string; value: string | number; hint?: string; testId?: string }) {
  return (
    <div class="stat-card" data-testid={props.testId}>
      <div class="stat-label">{props.label}</div>
      <div class="stat-value">{props.value}</div>
      {props.hint && <div class="stat-hint">{props.hint}</div>}
    </div>
  );
}
