/**
 * How long an organization's logs are kept (docs/api.md "Retention"): the server's defaults
 * (GATELOG_RETENTION_DAYS, GATELOG_CONTENT_RETENTION_DAYS) unless the organization's settings name its own.
 */
import type { OrganizationSettings } from '../org-settings/settings.js';

const DAY_MS = 86_400_000;

export interface RetentionDefaults {
  /** 0: kept forever. */
  retentionDays: number;
  /** 0: as retentionDays. */
  contentRetentionDays: number;
}

/** What the sweep does for one organization at `now`: epoch-ms cut-offs, null where nothing goes. */
export interface RetentionCutoffs {
  /** Logs older than this are deleted. */
  deleteBefore: number | null;
  /** Logs older than this lose their content (only when it is later than deleteBefore). */
  clearBefore: number | null;
}

export function retentionCutoffs(
  defaults: RetentionDefaults,
  settings: Pick<OrganizationSettings, 'retention_days' | 'content_retention_days'>,
  now: number,
): RetentionCutoffs {
  const days = settings.retention_days ?? defaults.retentionDays;
  const contentDays = settings.content_retention_days ?? defaults.contentRetentionDays;
  const deleteBefore = days > 0 ? now - days * DAY_MS : null;
  // Content kept as long as the log (0) or longer than it is cleared by the deletion itself.
  const clears = contentDays > 0 && (days === 0 || contentDays < days);
  return { deleteBefore, clearBefore: clears ? now - contentDays * DAY_MS : null };
}
