-- deleted; parameters: interval_start, interval_end
DELETE FROM "analytics"."orders" WHERE "created_at" >= ? AND "created_at" < ?;

-- inserted; parameters: none
INSERT INTO "analytics"."orders" ("order_id", "region", "created_at", "amount", "ds") SELECT "order_id", "region", "created_at", "amount", "ds" FROM "dagguard_stage";

