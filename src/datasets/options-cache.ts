/**
 * filter_options of a dataset, kept between list calls: every list answers them (docs/api.md "Dataset
 * logs"), and counting a large dataset's values takes far longer than reading a page. An entry is
 * valid for the dataset revision it was computed at; every write to the dataset's logs bumps the
 * revision in the same transaction, so an entry is never served after a change, on any node.
 */
import type { FilterOption } from '../filters/options.js';

/** Datasets whose options are kept at most; the least recently used go first. */
const MAX_ENTRIES = 256;

type Options = Record<string, FilterOption>;

export class DatasetOptionsCache {
  private readonly entries = new Map<string, { revision: number; options: Options }>();

  async get(datasetId: string, revision: number, compute: () => Promise<Options>): Promise<Options> {
    const hit = this.entries.get(datasetId);
    if (hit && hit.revision === revision) {
      // Re-inserted: a Map iterates in insertion order, so the first key is the least recently used.
      this.entries.delete(datasetId);
      this.entries.set(datasetId, hit);
      return hit.options;
    }
    const options = await compute();
    this.entries.delete(datasetId);
    this.entries.set(datasetId, { revision, options });
    if (this.entries.size > MAX_ENTRIES) this.entries.delete(this.entries.keys().next().value!);
    return options;
  }
}
