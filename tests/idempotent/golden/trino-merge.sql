-- deleted; parameters: interval_start, interval_end
DELETE FROM "analytics"."orders" WHERE "orders"."created_at" >= ? AND "orders"."created_at" < ? AND NOT EXISTS(SELECT 1 FROM "dagguard_stage" AS s WHERE "orders"."order_id" = s."order_id" AND "orders"."region" IS NOT DISTINCT FROM s."region");

-- count_insert; parameters: interval_start, interval_end
SELECT COUNT(*) FROM "dagguard_stage" AS s WHERE NOT EXISTS(SELECT 1 FROM "analytics"."orders" AS t WHERE t."order_id" = s."order_id" AND t."region" IS NOT DISTINCT FROM s."region" AND t."created_at" >= ? AND t."created_at" < ?);

-- count_update; parameters: interval_start, interval_end
SELECT COUNT(*) FROM "analytics"."orders" AS t JOIN "dagguard_stage" AS s ON t."order_id" = s."order_id" AND t."region" IS NOT DISTINCT FROM s."region" AND t."created_at" >= ? AND t."created_at" < ? WHERE t."created_at" IS DISTINCT FROM s."created_at" OR t."amount" IS DISTINCT FROM s."amount" OR t."ds" IS DISTINCT FROM s."ds";

-- merged; parameters: interval_start, interval_end
MERGE INTO "analytics"."orders" AS t USING "dagguard_stage" AS s ON t."order_id" = s."order_id" AND t."region" IS NOT DISTINCT FROM s."region" AND t."created_at" >= ? AND t."created_at" < ? WHEN MATCHED AND (t."created_at" IS DISTINCT FROM s."created_at" OR t."amount" IS DISTINCT FROM s."amount" OR t."ds" IS DISTINCT FROM s."ds") THEN UPDATE SET "created_at" = s."created_at", "amount" = s."amount", "ds" = s."ds" WHEN NOT MATCHED THEN INSERT ("order_id", "region", "created_at", "amount", "ds") VALUES (s."order_id", s."region", s."created_at", s."amount", s."ds");

