// SPDX-License-Identifier: GPL-2.0
/*
 * Claims on v2 keys and the key quota they are charged to.
 *
 * As in the kernel, every user who adds a v2 key holds a claim on it (the
 * kernel's ->mk_users), may drop only their own, and is charged for it in
 * their key quota: a key of the kernel's ".fscrypt" type, described as
 * "<identifier>.uid.<uid>", costs its description with the NUL plus
 * FSCRYPT_MAX_KEY_SIZE (64) bytes, against the limits of
 * /proc/sys/kernel/keys (200 keys and 20000 bytes by default, root
 * 1000000 and 25000000).  The kernel counts all of a user's keys; this
 * daemon counts the claims on its own mount.
 *
 * Both tables are arrays sorted for binary search: a lookup happens on
 * every key_status and set_policy, and quotas bound their size.
 */
#include "keyctl_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct claim {
	uint8_t id[F2FS_KEYCTL_ID_SIZE];
	uid_t *uids;			/* a handful: users sharing one key */
	size_t n;
};

struct quota {
	uid_t uid;
	uint32_t nkeys, nbytes;
};

/* FSCRYPT_MAX_KEY_SIZE: what the kernel charges for a claim's payload */
#define CLAIM_PAYLOAD 64

static uint32_t read_limit(const char *name, uint32_t dflt)
{
	char path[64];
	unsigned long v;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/sys/kernel/keys/%s", name);
	f = fopen(path, "re");
	if (!f)
		return dflt;
	if (fscanf(f, "%lu", &v) != 1 || v > UINT32_MAX)
		v = dflt;
	fclose(f);
	return (uint32_t)v;
}

void keyctl_read_limits(struct f2fs_keyctl *kc)
{
	kc->limits.maxkeys = read_limit("maxkeys", 200);
	kc->limits.maxbytes = read_limit("maxbytes", 20000);
	kc->limits.root_maxkeys = read_limit("root_maxkeys", 1000000);
	kc->limits.root_maxbytes = read_limit("root_maxbytes", 25000000);
}

/* The bytes the kernel charges uid for one claim. */
static uint32_t claim_cost(uid_t uid)
{
	char num[16];
	int n = snprintf(num, sizeof(num), "%lu", (unsigned long)uid);

	return 2 * F2FS_KEYCTL_ID_SIZE + (uint32_t)strlen(".uid.") + (uint32_t)n + 1 +
	       CLAIM_PAYLOAD;
}

/* ------------------------------------------------------------ tables */

/* Room for one more element at index i of a growing array; false on ENOMEM. */
static bool make_room(void **arr, size_t *n, size_t *cap, size_t size, size_t i)
{
	uint8_t *a = *arr;

	if (*n == *cap) {
		size_t c = *cap ? *cap * 2 : 16;

		a = realloc(a, c * size);
		if (!a)
			return false;
		*arr = a;
		*cap = c;
	}
	memmove(a + (i + 1) * size, a + i * size, (*n - i) * size);
	(*n)++;
	return true;
}

static void take_out(void *arr, size_t *n, size_t size, size_t i)
{
	uint8_t *a = arr;

	memmove(a + i * size, a + (i + 1) * size, (*n - i - 1) * size);
	(*n)--;
}

/* Index of the first claim not ordered before id. */
static size_t claim_pos(const struct f2fs_keyctl *kc, const uint8_t *id)
{
	size_t lo = 0, hi = kc->nclaims;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (memcmp(kc->claims[mid].id, id, F2FS_KEYCTL_ID_SIZE) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static struct claim *find_claim(struct f2fs_keyctl *kc, const uint8_t *id)
{
	size_t i = claim_pos(kc, id);

	if (i < kc->nclaims && !memcmp(kc->claims[i].id, id, F2FS_KEYCTL_ID_SIZE))
		return &kc->claims[i];
	return NULL;
}

/* Index of the first quota record not below uid. */
static size_t quota_pos(const struct f2fs_keyctl *kc, uid_t uid)
{
	size_t lo = 0, hi = kc->nquotas;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (kc->quotas[mid].uid < uid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static struct quota *find_quota(struct f2fs_keyctl *kc, uid_t uid)
{
	size_t i = quota_pos(kc, uid);

	return i < kc->nquotas && kc->quotas[i].uid == uid ? &kc->quotas[i] : NULL;
}

static bool claim_has(const struct claim *c, uid_t uid)
{
	for (size_t i = 0; c && i < c->n; i++)
		if (c->uids[i] == uid)
			return true;
	return false;
}

/* ------------------------------------------------------------ quota */

static bool over_quota(const struct f2fs_keyctl *kc, const struct quota *q, uid_t uid)
{
	uint32_t keys = q ? q->nkeys : 0, bytes = q ? q->nbytes : 0;
	uint32_t maxkeys = uid == 0 ? kc->limits.root_maxkeys : kc->limits.maxkeys;
	uint32_t maxbytes = uid == 0 ? kc->limits.root_maxbytes : kc->limits.maxbytes;

	return keys + 1 > maxkeys || (uint64_t)bytes + claim_cost(uid) > maxbytes;
}

/* Lock held. */
static int charge(struct f2fs_keyctl *kc, uid_t uid)
{
	size_t i = quota_pos(kc, uid);
	struct quota *q;

	if (i == kc->nquotas || kc->quotas[i].uid != uid) {
		if (!make_room((void **)&kc->quotas, &kc->nquotas, &kc->quotas_cap,
			       sizeof(*q), i))
			return -ENOMEM;
		kc->quotas[i] = (struct quota){ .uid = uid };
	}
	q = &kc->quotas[i];
	q->nkeys++;
	q->nbytes += claim_cost(uid);
	return 0;
}

/* Lock held. */
static void uncharge(struct f2fs_keyctl *kc, uid_t uid)
{
	size_t i = quota_pos(kc, uid);
	struct quota *q = i < kc->nquotas ? &kc->quotas[i] : NULL;

	if (!q || q->uid != uid)
		return;
	q->nkeys--;
	q->nbytes -= claim_cost(uid);
	if (!q->nkeys)
		take_out(kc->quotas, &kc->nquotas, sizeof(*q), i);
}

/* ------------------------------------------------------------ claims */

int keyctl_claim_allowed(struct f2fs_keyctl *kc, const uint8_t *id, uid_t uid)
{
	int err = 0;

	pthread_mutex_lock(&kc->lock);
	if (!claim_has(find_claim(kc, id), uid) && over_quota(kc, find_quota(kc, uid), uid))
		err = -EDQUOT;
	pthread_mutex_unlock(&kc->lock);
	return err;
}

int keyctl_claim(struct f2fs_keyctl *kc, const uint8_t *id, uid_t uid)
{
	size_t i;
	struct claim *c;
	uid_t *u;
	int err = 0;

	pthread_mutex_lock(&kc->lock);
	i = claim_pos(kc, id);
	if (i == kc->nclaims || memcmp(kc->claims[i].id, id, F2FS_KEYCTL_ID_SIZE)) {
		if (!make_room((void **)&kc->claims, &kc->nclaims, &kc->claims_cap, sizeof(*c),
			       i)) {
			err = -ENOMEM;
			goto out;
		}
		c = &kc->claims[i];
		memset(c, 0, sizeof(*c));
		memcpy(c->id, id, F2FS_KEYCTL_ID_SIZE);
	}
	c = &kc->claims[i];
	if (claim_has(c, uid))
		goto out;
	u = realloc(c->uids, (c->n + 1) * sizeof(*u));
	err = u ? charge(kc, uid) : -ENOMEM;
	if (u)
		c->uids = u;
	if (!err) {
		c->uids[c->n++] = uid;
	} else if (!c->n) {
		free(c->uids);
		take_out(kc->claims, &kc->nclaims, sizeof(*c), i);
	}
out:
	pthread_mutex_unlock(&kc->lock);
	return err;
}

bool keyctl_claim_held(struct f2fs_keyctl *kc, const uint8_t *id, uid_t uid, uint32_t *users)
{
	struct claim *c;
	bool held;

	pthread_mutex_lock(&kc->lock);
	c = find_claim(kc, id);
	held = claim_has(c, uid);
	if (users)
		*users = c ? (uint32_t)c->n : 0;
	pthread_mutex_unlock(&kc->lock);
	return held;
}

int keyctl_unclaim(struct f2fs_keyctl *kc, const uint8_t *id, uid_t uid, size_t *left)
{
	struct claim *c;
	int err = -ENOENT;

	pthread_mutex_lock(&kc->lock);
	c = find_claim(kc, id);
	for (size_t i = 0; c && i < c->n; i++) {
		if (c->uids[i] == uid) {
			c->uids[i] = c->uids[--c->n];
			uncharge(kc, uid);
			*left = c->n;
			err = 0;
			break;
		}
	}
	pthread_mutex_unlock(&kc->lock);
	return err;
}

void keyctl_unclaim_all(struct f2fs_keyctl *kc, const uint8_t *id)
{
	struct claim *c;

	pthread_mutex_lock(&kc->lock);
	c = find_claim(kc, id);
	if (c) {
		for (size_t i = 0; i < c->n; i++)
			uncharge(kc, c->uids[i]);
		free(c->uids);
		take_out(kc->claims, &kc->nclaims, sizeof(*c), (size_t)(c - kc->claims));
	}
	pthread_mutex_unlock(&kc->lock);
}

void keyctl_free_claims(struct f2fs_keyctl *kc)
{
	for (size_t i = 0; i < kc->nclaims; i++)
		free(kc->claims[i].uids);
	free(kc->claims);
	free(kc->quotas);
	kc->claims = NULL;
	kc->quotas = NULL;
	kc->nclaims = kc->nquotas = 0;
}
