CREATE TABLE "database_identity" (
	"one" boolean PRIMARY KEY DEFAULT true NOT NULL,
	"id" text NOT NULL,
	CONSTRAINT "database_identity_one_row" CHECK ("database_identity"."one")
);
--> statement-breakpoint
CREATE TABLE "usage_subtree_daily" (
	"ancestor_id" integer NOT NULL,
	"day" date NOT NULL,
	"model" text NOT NULL,
	"requests" bigint DEFAULT 0 NOT NULL,
	"prompt" bigint DEFAULT 0 NOT NULL,
	"completion" bigint DEFAULT 0 NOT NULL,
	"reasoning" bigint DEFAULT 0 NOT NULL,
	"cached" bigint DEFAULT 0 NOT NULL,
	"credit_used" numeric(24, 12) DEFAULT 0 NOT NULL,
	CONSTRAINT "usage_subtree_daily_ancestor_id_day_model_pk" PRIMARY KEY("ancestor_id","day","model")
);
--> statement-breakpoint
INSERT INTO "usage_subtree_daily" ("ancestor_id", "day", "model", "requests", "prompt", "completion", "reasoning", "cached", "credit_used")
SELECT x.a::int, d."day", d."model", sum(d."requests"), sum(d."prompt"), sum(d."completion"), sum(d."reasoning"), sum(d."cached"), sum(d."credit_used")
FROM "usage_daily" d, unnest(string_to_array(trim(both '.' from d."dna"), '.')) AS x(a)
WHERE x.a <> '' AND x.a::int <> d."account_id"
GROUP BY 1, 2, 3;
