/**
 * The rows of a table that belong to one organization and are addressed by id (its budgets, its rate
 * limits, its keys): listed oldest first, and read, changed or deleted by id within the organization, so
 * that another organization's id is no row at all (404). One piece for every such table, so that each
 * is queried the same way.
 */
import type { Kysely } from 'kysely';
import { isUniqueViolation } from './dialect.js';
import type { Database } from './schema.js';
import { type AppError, notFound } from '../errors.js';

type OrganizationTable = 'budgets' | 'rate_limits' | 'api_keys';

/** The columns every such table has, which the queries below use (the table's own type is Database's). */
interface OrganizationRow {
  id: string;
  organization_id: string;
  created_at: number;
  name: string;
}

/** The one table the queries below name: any organization table, by its own name. */
type Rows = Kysely<{ rows: OrganizationRow }>;

export class OrganizationRows<N extends OrganizationTable> {
  private readonly db: Rows;
  private readonly table: 'rows';

  /** `missing`: the 404's message for an id the organization has no row of. */
  constructor(
    db: Kysely<Database>,
    table: N,
    private readonly missing: string,
  ) {
    this.db = db as unknown as Rows;
    this.table = table as unknown as 'rows';
  }

  /** The organization's rows, oldest first; rows made in the same millisecond by `then`. */
  async list(organizationId: string, then: 'id' | 'name'): Promise<Database[N][]> {
    const rows = await this.db
      .selectFrom(this.table)
      .selectAll()
      .where('organization_id', '=', organizationId)
      .orderBy('created_at')
      .orderBy(then)
      .execute();
    return rows as unknown as Database[N][];
  }

  /** The organization's row of this id, or a 404. */
  async get(organizationId: string, id: string): Promise<Database[N]> {
    const row = await this.db
      .selectFrom(this.table)
      .selectAll()
      .where('id', '=', id)
      .where('organization_id', '=', organizationId)
      .executeTakeFirst();
    if (row === undefined) throw notFound(this.missing);
    return row as unknown as Database[N];
  }

  /** Inserts a row; `taken` is the error when it breaks a unique constraint. */
  async insert(row: Database[N], taken: () => AppError): Promise<void> {
    await this.write(taken, () =>
      this.db
        .insertInto(this.table)
        .values(row as unknown as OrganizationRow)
        .execute(),
    );
  }

  /** Writes the organization's row of this id; `taken` is the error when it breaks a unique constraint. */
  async update(organizationId: string, id: string, row: Database[N], taken: () => AppError): Promise<void> {
    await this.write(taken, () =>
      this.db
        .updateTable(this.table)
        .set(row as unknown as OrganizationRow)
        .where('id', '=', id)
        .where('organization_id', '=', organizationId)
        .execute(),
    );
  }

  /** Deletes the organization's row of this id, or a 404. */
  async delete(organizationId: string, id: string): Promise<void> {
    const result = await this.db
      .deleteFrom(this.table)
      .where('id', '=', id)
      .where('organization_id', '=', organizationId)
      .executeTakeFirst();
    if (Number(result.numDeletedRows) === 0) throw notFound(this.missing);
  }

  private async write(taken: () => AppError, run: () => Promise<unknown>): Promise<void> {
    try {
      await run();
    } catch (err) {
      if (isUniqueViolation(err)) throw taken();
      throw err;
    }
  }
}
