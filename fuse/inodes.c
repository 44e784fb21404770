// SPDX-License-Identifier: GPL-2.0
/*
 * The inodes the kernel holds (inodes.h): a hash table of node id ->
 * lookup count.  The root is always held and never counted.
 */
#include "inodes.h"

#include <errno.h>
#include <stdlib.h>

struct f2fs_known_ino {
	fuse_ino_t ino;
	uint64_t nlookup;
	struct f2fs_known_ino *next;
};

int f2fs_fuse_inodes_init(struct f2fs_fuse_inodes *t)
{
	t->nbuckets = 256;
	t->ninos = 0;
	t->buckets = calloc(t->nbuckets, sizeof(*t->buckets));
	if (!t->buckets)
		return -ENOMEM;
	pthread_mutex_init(&t->lock, NULL);
	return 0;
}

void f2fs_fuse_inodes_destroy(struct f2fs_fuse_inodes *t)
{
	if (!t->buckets)
		return;
	for (size_t b = 0; b < t->nbuckets; b++) {
		for (struct f2fs_known_ino *k = t->buckets[b], *next; k; k = next) {
			next = k->next;
			free(k);
		}
	}
	free(t->buckets);
	t->buckets = NULL;
	pthread_mutex_destroy(&t->lock);
}

static size_t ino_bucket(const struct f2fs_fuse_inodes *t, fuse_ino_t ino)
{
	return (size_t)((ino * 0x9e3779b97f4a7c15ull) >> 32) & (t->nbuckets - 1);
}

static void grow_table(struct f2fs_fuse_inodes *t)
{
	size_t nb = t->nbuckets * 2, old = t->nbuckets;
	struct f2fs_known_ino **nbk = calloc(nb, sizeof(*nbk)), **obk = t->buckets;

	if (!nbk)
		return;		/* longer chains, still correct */
	t->buckets = nbk;
	t->nbuckets = nb;
	for (size_t b = 0; b < old; b++) {
		for (struct f2fs_known_ino *k = obk[b], *next; k; k = next) {
			size_t h = ino_bucket(t, k->ino);

			next = k->next;
			k->next = nbk[h];
			nbk[h] = k;
		}
	}
	free(obk);
}

static struct f2fs_known_ino *find(struct f2fs_fuse_inodes *t, fuse_ino_t ino)
{
	for (struct f2fs_known_ino *k = t->buckets[ino_bucket(t, ino)]; k; k = k->next)
		if (k->ino == ino)
			return k;
	return NULL;
}

/*
 * Counted before the reply goes out, so a FORGET can never come first.
 * A reply the kernel did not take (an interrupted request) leaves the
 * count too high, which keeps an unlinked inode until unmount (the next
 * mount frees it as an orphan): the safe direction.
 */
void f2fs_fuse_inodes_lookup(struct f2fs_fuse_inodes *t, fuse_ino_t ino)
{
	struct f2fs_known_ino *k;

	if (ino == 0 || ino == FUSE_ROOT_ID)
		return;
	pthread_mutex_lock(&t->lock);
	k = find(t, ino);
	if (k) {
		k->nlookup++;
	} else if ((k = malloc(sizeof(*k)))) {
		size_t h = ino_bucket(t, ino);

		k->ino = ino;
		k->nlookup = 1;
		k->next = t->buckets[h];
		t->buckets[h] = k;
		if (++t->ninos > t->nbuckets * 2)
			grow_table(t);
	}
	/* out of memory: the inode looks unheld, as before this table existed */
	pthread_mutex_unlock(&t->lock);
}

bool f2fs_fuse_inodes_forget(struct f2fs_fuse_inodes *t, fuse_ino_t ino, uint64_t nlookup)
{
	struct f2fs_known_ino **pp, *k;
	bool gone = false;

	if (ino == FUSE_ROOT_ID)
		return false;
	pthread_mutex_lock(&t->lock);
	for (pp = &t->buckets[ino_bucket(t, ino)]; (k = *pp); pp = &k->next) {
		if (k->ino != ino)
			continue;
		if (k->nlookup > nlookup) {
			k->nlookup -= nlookup;
		} else {
			*pp = k->next;
			free(k);
			t->ninos--;
			gone = true;
		}
		break;
	}
	pthread_mutex_unlock(&t->lock);
	return gone;
}

bool f2fs_fuse_inodes_held(struct f2fs_fuse_inodes *t, fuse_ino_t ino)
{
	bool held;

	if (ino == FUSE_ROOT_ID)
		return true;
	pthread_mutex_lock(&t->lock);
	held = find(t, ino) != NULL;
	pthread_mutex_unlock(&t->lock);
	return held;
}

fuse_ino_t *f2fs_fuse_inodes_list(struct f2fs_fuse_inodes *t, size_t *n)
{
	fuse_ino_t *arr;
	size_t i = 0;

	pthread_mutex_lock(&t->lock);
	arr = malloc((t->ninos + 1) * sizeof(*arr));
	if (arr) {
		arr[i++] = FUSE_ROOT_ID;
		for (size_t b = 0; b < t->nbuckets; b++)
			for (struct f2fs_known_ino *k = t->buckets[b]; k; k = k->next)
				arr[i++] = k->ino;
	}
	pthread_mutex_unlock(&t->lock);
	*n = i;
	return arr;
}
