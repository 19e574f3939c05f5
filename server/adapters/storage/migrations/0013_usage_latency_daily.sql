CREATE TABLE "usage_latency_daily" (
	"account_id" integer NOT NULL,
	"whose" text NOT NULL,
	"day" date NOT NULL,
	"model" text NOT NULL,
	"key_kind" text NOT NULL,
	"requests" bigint DEFAULT 0 NOT NULL,
	"duration_buckets" bigint[] NOT NULL,
	"first_byte_buckets" bigint[] NOT NULL,
	CONSTRAINT "usage_latency_daily_account_id_whose_day_model_key_kind_pk" PRIMARY KEY("account_id","whose","day","model","key_kind")
);
