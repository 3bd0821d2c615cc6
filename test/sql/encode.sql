-- idgen_encode() and idgen_parse(): fixed width, sorting like the IDs
SELECT idgen_encode(0), idgen_encode(0, 'base62');
SELECT idgen_encode(9223372036854775807) AS max32,
       idgen_encode(9223372036854775807, 'base62') AS max62;
-- computed by hand: 32^12 * 1 + 31 -> "1" then eleven "0" and "Z"
SELECT idgen_encode(1152921504606846976 + 31);
-- 62^10 = 839299365868340224 -> "1" then ten "0"; 61 -> "z"
SELECT idgen_encode(839299365868340224, 'base62'), idgen_encode(61, 'base62');

-- round trips and order, over IDs spread across the whole range
CREATE TEMP TABLE sample AS
SELECT (random() * 9223372036854775807)::bigint AS id FROM generate_series(1, 10000)
UNION ALL VALUES (0), (1), (31), (32), (61), (62), (9223372036854775807);
SELECT count(*) FILTER (WHERE idgen_parse(idgen_encode(id)) <> id) AS base32_mismatch,
       count(*) FILTER (WHERE idgen_parse(idgen_encode(id, 'base62'), 'base62') <> id) AS base62_mismatch
FROM sample;
SELECT count(*) AS out_of_order FROM (
	SELECT id, lag(id) OVER (ORDER BY idgen_encode(id) COLLATE "C") AS prev32,
	       lag(id) OVER (ORDER BY idgen_encode(id, 'base62') COLLATE "C") AS prev62
	FROM sample) s
WHERE id < prev32 OR id < prev62;

-- Crockford reads lowercase, I and L as 1, O as 0
SELECT idgen_parse('000000000000z'), idgen_parse('0000000000OIL');

-- errors
SELECT idgen_encode(-1);
SELECT idgen_encode(1, 'base64');
SELECT idgen_parse('0000000000000U');
SELECT idgen_parse('000000000000U');
SELECT idgen_parse('00000000000-0', 'base32');
SELECT idgen_parse('ZZZZZZZZZZZZZ');
-- one past the largest bigint, in each encoding: refused, never wrapped
SELECT idgen_parse('8000000000000');
SELECT idgen_parse('AzL8n0Y58m8', 'base62');
SELECT idgen_parse('', 'base62');
SELECT idgen_parse(NULL), idgen_encode(NULL);

-- lengths and positions count characters, and a wrong character is shown
-- whole, whatever its length in bytes
SELECT idgen_parse('0000000000€AB', 'base32');
SELECT idgen_parse('0000000000€', 'base62');
SELECT idgen_parse('0000000000€', 'base32');
