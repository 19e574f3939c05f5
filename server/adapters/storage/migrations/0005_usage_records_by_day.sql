-- usage_records partitioned by UTC day (created_at), so retention drops whole partitions.
-- Partitions are named usage_records_pYYYYMMDD and created ahead by state/usage/partitions.ts;
-- the default partition only catches records whose time has no partition yet.
ALTER TABLE "usage_records" RENAME TO "usage_records_unpartitioned";--> statement-breakpoint
ALTER INDEX "usage_records_time_brin" RENAME TO "usage_records_unpartitioned_time_brin";--> statement-breakpoint
CREATE TABLE "usage_records" (LIKE "usage_records_unpartitioned" INCLUDING DEFAULTS) PARTITION BY RANGE ("created_at");--> statement-breakpoint
CREATE INDEX "usage_records_time_brin" ON "usage_records" USING brin ("created_at");--> statement-breakpoint
CREATE TABLE "usage_records_default" PARTITION OF "usage_records" DEFAULT;--> statement-breakpoint
DO $$
DECLARE d date;
BEGIN
  FOR d IN SELECT DISTINCT ("created_at" AT TIME ZONE 'UTC')::date FROM "usage_records_unpartitioned" LOOP
    EXECUTE format('CREATE TABLE %I PARTITION OF "usage_records" FOR VALUES FROM (%L) TO (%L)',
      'usage_records_p' || to_char(d, 'YYYYMMDD'), (d::timestamp AT TIME ZONE 'UTC'), ((d + 1)::timestamp AT TIME ZONE 'UTC'));
  END LOOP;
END $$;--> statement-breakpoint
INSERT INTO "usage_records" SELECT * FROM "usage_records_unpartitioned";--> statement-breakpoint
DROP TABLE "usage_records_unpartitioned";
