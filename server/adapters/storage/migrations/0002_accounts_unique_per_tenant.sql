DROP INDEX "accounts_name_key";--> statement-breakpoint
DROP INDEX "accounts_email_key";--> statement-breakpoint
CREATE UNIQUE INDEX "accounts_name_owner_key" ON "accounts" USING btree ("name","owner_id");--> statement-breakpoint
CREATE UNIQUE INDEX "accounts_email_owner_key" ON "accounts" USING btree ("email","owner_id");