CREATE TABLE "response_keys" (
	"owner_id" integer NOT NULL,
	"response_id" text NOT NULL,
	"key_id" integer NOT NULL,
	"expires_at" timestamp with time zone NOT NULL,
	CONSTRAINT "response_keys_owner_id_response_id_pk" PRIMARY KEY("owner_id","response_id")
);
--> statement-breakpoint
CREATE INDEX "response_keys_expiry_idx" ON "response_keys" USING btree ("expires_at");