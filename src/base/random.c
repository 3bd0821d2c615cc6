/*
 * random.c
 *		idgen's one source of random numbers, per process.
 *
 * Strong bytes come from pg_strong_random() in blocks of 4 KB, one call
 * per 512 UUIDs' worth instead of one per value.  A block is used only by
 * the process that drew it: the postmaster loads the library and every
 * backend is its fork, so a backend draws its own, and no two processes
 * share random bytes.  random_u64(), for sequence starts, shards and random
 * fields, where speed matters more than strength, is splitmix64 seeded from
 * those bytes by the same rule.
 */
#include "postgres.h"

#include "miscadmin.h"

#include "random.h"

#define RANDOM_BLOCK	4096

/* Bytes drawn by process block_pid, handed out from block_pos on. */
static uint8 block[RANDOM_BLOCK];
static int	block_pos = RANDOM_BLOCK;
static int	block_pid = 0;

static uint64 mix_state;
static int	mix_pid = 0;

/* n bytes (at most 4 KB) this process has never handed out before. */
const uint8 *
random_strong(int n)
{
	const uint8 *bytes;

	Assert(n > 0 && n <= RANDOM_BLOCK);
	if (block_pid != MyProcPid || block_pos + n > RANDOM_BLOCK)
	{
		if (!pg_strong_random(block, RANDOM_BLOCK))
			ereport(ERROR,
					(errcode(ERRCODE_INTERNAL_ERROR),
					 errmsg("could not generate random values for idgen")));
		block_pid = MyProcPid;
		block_pos = 0;
	}
	bytes = block + block_pos;
	block_pos += n;
	return bytes;
}

/* A fast 64-bit value: splitmix64, seeded in this process. */
uint64
random_u64(void)
{
	uint64		z;

	if (unlikely(mix_pid != MyProcPid))
	{
		memcpy(&mix_state, random_strong(sizeof(mix_state)), sizeof(mix_state));
		mix_pid = MyProcPid;
	}
	z = (mix_state += UINT64CONST(0x9E3779B97F4A7C15));
	z = (z ^ (z >> 30)) * UINT64CONST(0xBF58476D1CE4E5B9);
	z = (z ^ (z >> 27)) * UINT64CONST(0x94D049BB133111EB);
	return z ^ (z >> 31);
}
