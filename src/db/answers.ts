/** Whether the database answers at all: the cheapest statement, on the main connection. */
import { type Kysely, sql } from 'kysely';
import type { Database } from './schema.js';

export async function databaseAnswers(db: Kysely<Database>): Promise<boolean> {
  try {
    await sql`select 1`.execute(db);
    return true;
  } catch {
    return false;
  }
}
