/**
 * The spans of one export not stored, for OTLP's partialSuccess: one count and a short message naming the
 * first few reasons — never a list as long as the export (ten million rejected spans are one number).
 */
const SHOWN_REASONS = 5;

export class SpanRejections {
  /** Spans rejected. */
  count = 0;
  private reasons: { text: string; spans: number }[] = [];

  /** `spans` spans rejected for one reason; `first` puts it before those already named. */
  add(reason: string, spans = 1, first = false): void {
    if (spans <= 0) return;
    this.count += spans;
    if (first) this.reasons = [{ text: reason, spans }, ...this.reasons].slice(0, SHOWN_REASONS);
    else if (this.reasons.length < SHOWN_REASONS) this.reasons.push({ text: reason, spans });
  }

  message(): string {
    const rest = this.count - this.reasons.reduce((sum, r) => sum + r.spans, 0);
    return this.reasons.map((r) => r.text).join('; ') + (rest > 0 ? `; and ${rest} more` : '');
  }
}
