import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RemotePglite } from './pglite-remote';

let db: RemotePglite;

beforeAll(async () => {
  db = await RemotePglite.create(undefined);
  await db.exec('create table t (id int primary key, note text)');
});
afterAll(async () => { await db?.close(); });

const count = async () => Number(((await db.query('select count(*)::int as n from t')).rows[0] as { n: number }).n);

describe('RemotePglite (the embedded database on its own thread)', () => {
  it('answers queries in both row modes, keeping the raw text of the types asked for', async () => {
    await db.query('insert into t values ($1, $2)', [1, 'one']);
    expect((await db.query('select id, note from t', [], { rowMode: 'array' })).rows).toEqual([[1, 'one']]);
    // fixed-date: a literal parsed by the database, never compared with its clock.
    const ts = await db.query(`select timestamptz '2026-01-02 03:04:05+00' as at`, [], { rowMode: 'object', parsers: { 1184: (v: string) => v } });
    expect(typeof (ts.rows[0] as { at: unknown }).at).toBe('string');
  });

  it('passes PostgreSQL errors back with their code and constraint', async () => {
    const err = await db.query('insert into t values (1, $1)', ['again']).catch((e) => e);
    expect(err).toMatchObject({ code: '23505', constraint: 't_pkey' });
    expect(err).toBeInstanceOf(Error);
  });

  it('commits a transaction, and rolls it back when its callback throws', async () => {
    await db.transaction(async (tx) => { await tx.query('insert into t values (2, $1)', ['two']); });
    expect(await count()).toBe(2);
    await expect(db.transaction(async (tx) => {
      await tx.query('insert into t values (3, $1)', ['three']);
      throw new Error('changed my mind');
    })).rejects.toThrow('changed my mind');
    expect(await count()).toBe(2);
  });

  it('makes a statement sent outside an open transaction wait for it, as PGlite does in-process', async () => {
    const order: string[] = [];
    let release!: () => void;
    const gate = new Promise<void>((r) => { release = r; });
    const tx = db.transaction(async (t) => {
      await t.query('insert into t values (4, $1)', ['four']);
      await gate;
      order.push('tx done');
    });
    await new Promise((r) => setTimeout(r, 20));
    const outside = db.query('select count(*)::int as n from t').then((r) => { order.push('outside'); return r; });
    await new Promise((r) => setTimeout(r, 20));
    release();
    await tx;
    expect(((await outside).rows[0] as { n: number }).n).toBe(3);
    expect(order).toEqual(['tx done', 'outside']);
  });

  it('copies CSV in with COPY FROM /dev/blob, inside a transaction', async () => {
    await db.transaction((t) => t.copyFrom(`copy t (id, note) from '/dev/blob' with (format csv)`, '10,"a,b"\n11,"say ""hi"""\n'));
    expect((await db.query('select note from t where id >= 10 order by id')).rows).toEqual([{ note: 'a,b' }, { note: 'say "hi"' }]);
  });
});
