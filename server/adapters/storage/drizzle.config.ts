import { defineConfig } from 'drizzle-kit';

export default defineConfig({
  dialect: 'postgresql',
  schema: './server/adapters/storage/schema.ts',
  out: './server/adapters/storage/migrations',
});
