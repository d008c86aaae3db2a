"""numba broad phase of the rope-rope contacts: which segment pairs to test.

``contacts.FrameContacts`` predicts every particle's motion (it keeps its velocity v and an
acceleration a; pinned particles move linearly) and asks for the segment pairs whose
predicted paths come within their radii plus a slack over a horizon. The segments' boxes
(now and at the horizon, in a frame moving with the shared motion, so a falling heap keeps
small boxes) go into the hashed grid of ``kernels_broadphase``; each pair of overlapping
boxes is kept if its distance now is within reach of what its ends can approach each other.
After every substep ``left_prediction`` finds the particles farther than their slack from
their prediction; they get a new prediction, and only the segments at them are searched
again (``kernels_pairs.segment_pairs`` with ``full`` off: against the grid of the last full
search, and the segments searched again since), unless they are many. Everything runs
in a fixed order on one thread: same input, same pairs.
"""

from __future__ import annotations

import math

import numpy as np

from ..jit import kernel
from .kernels_pairs import predict_ends, segment_grid, segment_pairs

__all__ = ["clear_flags", "flagged", "mark_moved", "predicted_end", "measure_motion", "merge_pairs",
           "moved_boxes", "moving", "predict_segments", "restart_prediction",
           "left_prediction", "segment_bounds", "segment_boxes", "segment_grid",
           "segment_motion", "segment_pairs", "segments_at", "start_prediction"]


CELL_EXTENTS = 2.5
"""The rope-rope grid's cell, in median segment box extents. Measured on the landing terrain
(landing frames 95/88 -> 82/74 ms, from 1 to 2.5), the crossed layers (117 -> 104 ms at 2)
and the sphere (142 -> 137): a query then looks up fewer cells (8 -> about 3, each a cache
miss) and meets each box in fewer of them, for more entries per cell."""


@kernel
def _quantile(values, q):
    """The q-quantile (0..1) of ``values`` (1-D, left as they are), linear between
    neighbours as numpy's percentile and median; 0 for none. Quickselect on a copy (linear
    time; written out: numba's own median and percentile cost seconds of compile time)."""
    n = values.shape[0]
    if n == 0:
        return 0.0
    a = values.copy()
    position = q * (n - 1)
    low = int(math.floor(position))
    left, right = 0, n - 1
    while left < right:  # until a[low] holds the low-th smallest, smaller ones before it
        pivot = a[(left + right) // 2]
        i, j = left, right
        while i <= j:
            while a[i] < pivot:
                i += 1
            while pivot < a[j]:
                j -= 1
            if i <= j:
                a[i], a[j] = a[j], a[i]
                i += 1
                j -= 1
        if low <= j:
            right = j
        elif low >= i:
            left = i
        else:
            break
    value = a[low]
    if low + 1 >= n or position == low:
        return value
    above = a[low + 1]
    for k in range(low + 2, n):  # the next order statistic: the least of those above
        above = min(above, a[k])
    return value + (position - low) * (above - value)


@kernel
def _sampled_median(values, column, stride):
    """Median of values[::stride, column] (any common vector keeps the bounds valid: a sample
    is as good as all and much cheaper)."""
    n = (values.shape[0] + stride - 1) // stride
    picked = np.empty(n)
    for k in range(n):
        picked[k] = values[k * stride, column]
    return _quantile(picked, 0.5)


@kernel
def measure_motion(ids, x, v, v_last, held, free, pin_velocity, h, limit, still, span,
                   inverse_scale, velocity, acceleration, x_from):
    """The prediction of the particles ``ids`` (K,) from the substep under way, into
    ``velocity``, ``acceleration`` (N, 3):
    free particles keep v [m/s] (the rope's solve done, the contacts to come) and
    a = (v - v_last) / h [m/s^2] (v_last: the last substep's end), at most ``limit`` long;
    where the last substep's contacts moved the particle (``held``) it keeps v_last, a = 0
    (the contact holds it; v is the pull it is about to undo). Pinned particles move with
    ``pin_velocity``, a = 0. A prediction that moves less than ``still`` [m] over ``span``
    [s] is zero: a particle at rest is predicted exactly still (``contacts`` keeps the
    rope-rope pairs of still particles from frame to frame). Also where the substep began:
    x_from = x - v ``inverse_scale`` (N, 3) [m] (v = (x - x_from) scale)."""
    for index in range(ids.shape[0]):
        i = ids[index]
        for c in range(3):
            x_from[i, c] = x[i, c] - v[i, c] * inverse_scale
        if not free[i]:
            for c in range(3):
                velocity[i, c] = pin_velocity[i, c]
                acceleration[i, c] = 0.0
            continue
        a2 = 0.0
        v2 = 0.0
        for c in range(3):
            velocity[i, c] = v_last[i, c] if held[i] else v[i, c]
            acceleration[i, c] = (v[i, c] - v_last[i, c]) / h
            a2 += acceleration[i, c] ** 2
            v2 += velocity[i, c] ** 2
        scale = 0.0 if held[i] else (limit / math.sqrt(a2) if a2 > limit * limit else 1.0)
        a2 *= scale * scale
        if math.sqrt(v2) * span + 0.5 * math.sqrt(a2) * span * span <= still:
            for c in range(3):
                velocity[i, c] = 0.0
            scale = 0.0
        for c in range(3):
            acceleration[i, c] *= scale


@kernel
def start_prediction(v, pin_velocity, free, gravity, span, still, velocity, acceleration):
    """The prediction at a frame's start, into velocity, acceleration (N, 3): free particles
    keep v (N, 3) [m/s], with gravity (3,) [m/s^2] if faster than one frame (``span`` [s])
    of it would make them (in flight), else no acceleration (resting, hanging, held), and
    none at all if moving less than ``still`` [m] over the frame; pinned ones move with
    ``pin_velocity`` (N, 3) [m/s]."""
    g2 = gravity[0] * gravity[0] + gravity[1] * gravity[1] + gravity[2] * gravity[2]
    for i in range(v.shape[0]):
        speed2 = v[i, 0] * v[i, 0] + v[i, 1] * v[i, 1] + v[i, 2] * v[i, 2]
        flying = free[i] and speed2 > g2 * span * span
        resting = free[i] and not flying and math.sqrt(speed2) * span <= still
        for c in range(3):
            velocity[i, c] = (0.0 if resting else v[i, c]) if free[i] else pin_velocity[i, c]
            acceleration[i, c] = gravity[c] if flying else 0.0


@kernel
def segment_motion(x, v, a, radius, slack, remaining, h, edges, horizon_reach):
    """The prediction a full search works with, over the next stretch of the frame.

    The stretch (horizon) is the rest of the frame ``remaining`` [s], shortened where particles move
    fast relative to each other (landing, a whip) so that the 90th percentile of the motion relative
    to the shared (median) motion stays within ``horizon_reach`` radii, but never below one substep
    h [s]: the search is redone after it. x, v, a (N, 3) [m], [m/s], [m/s^2]; radius, slack (N,)
    [m]. Returns (end (N, 3) [m]: x + (v - v_s) T + (a - a_s) T^2 / 2, the prediction after the
    horizon T in a frame moving with the shared motion v_s, a_s; grow (N,) [m]: radius + slack + the
    bulge of the parabola off its chord, |a - a_s| T^2 / 8;
    grid cell [m] (CELL_EXTENTS median box extents); horizon [s]; v_s (3,); a_s (3,))."""
    n = x.shape[0]
    stride = max(n // 1024, 1)
    shared_v = np.empty(3)
    shared_a = np.empty(3)
    for c in range(3):
        shared_v[c] = _sampled_median(v, c, stride)
        shared_a[c] = _sampled_median(a, c, stride)
    relative = np.empty(n)
    for i in range(n):
        dv2 = 0.0
        da2 = 0.0
        for c in range(3):
            dv2 += (v[i, c] - shared_v[c]) ** 2
            da2 += (a[i, c] - shared_a[c]) ** 2
        relative[i] = math.sqrt(dv2) + 0.5 * math.sqrt(da2) * remaining
    fast = _quantile(relative, 0.9)
    typical = _quantile(radius, 0.5)
    horizon = remaining
    if fast * remaining > horizon_reach * typical:
        horizon = min(remaining, max(h, horizon_reach * typical / fast))
    end = np.empty((n, 3))
    grow = np.empty(n)
    half_square = 0.5 * horizon * horizon
    for i in range(n):
        da2 = 0.0
        for c in range(3):
            da = a[i, c] - shared_a[c]
            end[i, c] = x[i, c] + (v[i, c] - shared_v[c]) * horizon + da * half_square
            da2 += da * da
        grow[i] = radius[i] + slack[i] + 0.25 * math.sqrt(da2) * half_square
    m = edges.shape[0]
    extent = np.empty(m)
    for e in range(m):
        p, q = edges[e, 0], edges[e, 1]
        longest = 0.0
        for c in range(3):
            longest = max(longest, max(x[p, c], x[q, c], end[p, c], end[q, c])
                          - min(x[p, c], x[q, c], end[p, c], end[q, c]))
        extent[e] = longest + 2.0 * max(grow[p], grow[q])
    cell = max(CELL_EXTENTS * _quantile(extent, 0.5), 1e-4) if m else 1.0
    return end, grow, cell, horizon, shared_v, shared_a


@kernel
def segment_boxes(edges, query, start, end, grow):
    """Boxes (lo, hi (K, 3) [m]) of the segments ``query`` (K,) holding both ends at
    ``start`` and at ``end`` (N, 3) [m], grown by the larger ``grow`` (N,) [m] of their ends."""
    k = query.shape[0]
    lo = np.empty((k, 3))
    hi = np.empty((k, 3))
    for index in range(k):
        e = query[index]
        p, q = edges[e, 0], edges[e, 1]
        g = max(grow[p], grow[q])
        for c in range(3):
            lo[index, c] = min(start[p, c], start[q, c], end[p, c], end[q, c]) - g
            hi[index, c] = max(start[p, c], start[q, c], end[p, c], end[q, c]) + g
    return lo, hi


@kernel
def moved_boxes(query, edges, position, velocity, acceleration, horizon, then, later,
                shared_v, shared_a, radius, slack):
    """Boxes (lo, hi (K, 3) [m]) of the segments ``query`` (K,) for a search in the frame of
    the last full one (moving with shared_v, shared_a (3,) from its start): the ends'
    predictions from ``position``/``velocity``/``acceleration`` (N, 3) now, ``then`` [s]
    after that start, to the horizon ``horizon`` [s] later (``later`` [s] after it), grown by
    radius + slack + the parabola's bulge, as ``segment_motion`` does for all."""
    k = query.shape[0]
    lo = np.empty((k, 3))
    hi = np.empty((k, 3))
    half_square = 0.5 * horizon * horizon
    for index in range(k):
        e = query[index]
        for c in range(3):
            lo[index, c] = np.inf
            hi[index, c] = -np.inf
        grow = 0.0
        for end in range(2):
            i = edges[e, end]
            da2 = 0.0
            for c in range(3):
                da = acceleration[i, c] - shared_a[c]
                da2 += da * da
                now = position[i, c] - (shared_v[c] * then + 0.5 * shared_a[c] * then * then)
                future = (position[i, c] + velocity[i, c] * horizon
                          + acceleration[i, c] * half_square
                          - (shared_v[c] * later + 0.5 * shared_a[c] * later * later))
                lo[index, c] = min(lo[index, c], now, future)
                hi[index, c] = max(hi[index, c], now, future)
            grow = max(grow, radius[i] + slack[i] + 0.25 * math.sqrt(da2) * half_square)
        for c in range(3):
            lo[index, c] -= grow
            hi[index, c] += grow
    return lo, hi


@kernel
def restart_prediction(ids, x, velocity, acceleration, now, x0, v0, a0, since):
    """New predictions for the particles ``ids``: from x now [s], with ``velocity`` and
    ``acceleration`` (N, 3), into x0, v0, a0 (N, 3) and since (N,)."""
    for index in range(ids.shape[0]):
        i = ids[index]
        for c in range(3):
            x0[i, c] = x[i, c]
            v0[i, c] = velocity[i, c]
            a0[i, c] = acceleration[i, c]
        since[i] = now


@kernel
def segment_bounds(edges, position, velocity, acceleration, shared_v, shared_a, horizon,
                   segment_reach):
    """Per segment (M,) [m]: half its length at ``position`` + its reach + the most its ends
    move relative to the shared motion (shared_v, shared_a (3,)) over ``horizon`` [s]. Two
    segments whose midpoints are farther apart than the sum of theirs cannot touch within
    the horizon (``kernels_pairs._pair_kept``'s first test, without a square root)."""
    m = edges.shape[0]
    bound = np.empty(m)
    half_square = 0.5 * horizon * horizon
    for e in range(m):
        p, q = edges[e, 0], edges[e, 1]
        length2 = 0.0
        for c in range(3):
            length2 += (position[q, c] - position[p, c]) ** 2
        motion = 0.0
        for i in (p, q):
            dv2 = 0.0
            da2 = 0.0
            for c in range(3):
                dv2 += (velocity[i, c] - shared_v[c]) ** 2
                da2 += (acceleration[i, c] - shared_a[c]) ** 2
            motion = max(motion, math.sqrt(dv2) * horizon + math.sqrt(da2) * half_square)
        bound[e] = 0.5 * math.sqrt(length2) + segment_reach[e] + motion
    return bound


@kernel
def merge_pairs(pairs, searched, new_pairs):
    """The pairs (K, 2) without those with a segment flagged in ``searched`` (M,) (found
    again), merged with ``new_pairs``; both in increasing (first, second) order, and so is
    the result."""
    kept = 0
    for k in range(pairs.shape[0]):
        if searched[pairs[k, 0]] == 0 and searched[pairs[k, 1]] == 0:
            kept += 1
    merged = np.empty((kept + new_pairs.shape[0], 2), dtype=np.int64)
    count = 0
    j = 0
    for k in range(pairs.shape[0]):
        a, b = pairs[k, 0], pairs[k, 1]
        if searched[a] != 0 or searched[b] != 0:
            continue
        while j < new_pairs.shape[0] and (new_pairs[j, 0] < a or (
                new_pairs[j, 0] == a and new_pairs[j, 1] < b)):
            merged[count, 0], merged[count, 1] = new_pairs[j, 0], new_pairs[j, 1]
            count += 1
            j += 1
        merged[count, 0], merged[count, 1] = a, b
        count += 1
    while j < new_pairs.shape[0]:
        merged[count, 0], merged[count, 1] = new_pairs[j, 0], new_pairs[j, 1]
        count += 1
        j += 1
    return merged


@kernel
def left_prediction(x, x0, v0, a0, since, now, slack, strayed):
    """How many particles are farther than their ``slack`` (N,) [m] from where their
    prediction puts them at ``now`` [s]: x0 + v0 t + a0 t^2 / 2, t = now - since (N,) [s];
    flagged in ``strayed`` (N,) (1, others 0). Pairs of the others hold every contact.
    Without a branch, on flat views (C-contiguous arrays): 8 particles at a time."""
    count = 0
    p, q, u, g = x.reshape(-1), x0.reshape(-1), v0.reshape(-1), a0.reshape(-1)
    for i in range(np.uint64(since.shape[0])):
        j = i * np.uint64(3)
        j1, j2 = j + np.uint64(1), j + np.uint64(2)
        t = now - since[i]
        half_square = 0.5 * t * t
        dx = p[j] - (q[j] + u[j] * t + g[j] * half_square)
        dy = p[j1] - (q[j1] + u[j1] * t + g[j1] * half_square)
        dz = p[j2] - (q[j2] + u[j2] * t + g[j2] * half_square)
        away = dx * dx + dy * dy + dz * dz > slack[i] * slack[i]
        strayed[i] = 1 if away else 0
        count += 1 if away else 0
    return count


@kernel
def predict_segments(query, edges, x0, v0, a0, since, now, stamp, mark, position, velocity):
    """The prediction at ``now`` [s] of the ends of the segments ``query`` (K,): position
    x0 + v0 t + a0 t^2 / 2 and velocity v0 + a0 t (N, 3), t = now - since, stamped ``mark``
    in ``stamp`` (N,) (``kernels_pairs.segment_pairs`` with ``lazy`` predicts the rest as
    it needs them)."""
    for index in range(query.shape[0]):
        predict_ends(query[index], edges, x0, v0, a0, since, now, stamp, mark, position,
                      velocity)


@kernel
def segments_at(ids, incident_start, incident, moved_box, current):
    """The segments at the particles ``ids`` (K,) (particle i's are incident[
    incident_start[i]:incident_start[i + 1]]), each once, flagged in ``current`` (M,), and
    how many of them have no moved box yet (``moved_box`` (M,) 0)."""
    size = 0
    for index in range(ids.shape[0]):
        i = ids[index]
        size += incident_start[i + 1] - incident_start[i]
    query = np.empty(size, dtype=np.int64)
    count = 0
    fresh = 0
    for index in range(ids.shape[0]):
        i = ids[index]
        for k in range(incident_start[i], incident_start[i + 1]):
            e = incident[k]
            if current[e] == 0:
                current[e] = 1
                query[count] = e
                count += 1
                fresh += 1 if moved_box[e] == 0 else 0
    return query[:count], fresh


@kernel
def mark_moved(query, moved_box, extra, extra_count):
    """Flag the segments ``query`` in ``moved_box`` (M,), appending those not yet flagged to
    ``extra`` (M,) after its first ``extra_count``; returns the new count."""
    for index in range(query.shape[0]):
        e = query[index]
        if moved_box[e] == 0:
            moved_box[e] = 1
            extra[extra_count] = e
            extra_count += 1
    return extra_count


@kernel
def clear_flags(ids, flags):
    """flags[ids] = 0."""
    for index in range(ids.shape[0]):
        flags[ids[index]] = 0


@kernel
def predicted_end(x, velocity, acceleration, span, end):
    """Where the prediction takes each particle after ``span`` [s]: x + v T + a T^2 / 2
    (N, 3) [m] into ``end``."""
    for i in range(x.shape[0]):
        for c in range(3):
            end[i, c] = x[i, c] + velocity[i, c] * span + 0.5 * acceleration[i, c] * span * span


@kernel
def flagged(flags):
    """The indices (K,) of the nonzero entries of ``flags`` (N,), increasing (5x faster than
    ``np.flatnonzero`` on 10k uint8)."""
    count = 0
    for i in range(flags.shape[0]):
        count += 1 if flags[i] != 0 else 0
    ids = np.empty(count, dtype=np.int64)
    k = 0
    for i in range(flags.shape[0]):
        if flags[i] != 0:
            ids[k] = i
            k += 1
    return ids


@kernel
def moving(v0, a0, flags):
    """Flags (N,) uint8 of the predictions that are not still (v0 or a0 (N, 3) nonzero);
    returns how many."""
    count = 0
    for i in range(flags.shape[0]):
        still = (v0[i, 0] == 0.0 and v0[i, 1] == 0.0 and v0[i, 2] == 0.0
                 and a0[i, 0] == 0.0 and a0[i, 1] == 0.0 and a0[i, 2] == 0.0)
        flags[i] = 0 if still else 1
        count += 0 if still else 1
    return count


@kernel
def frames_past_end(velocity, acceleration, ids, remaining, frame, most, reach, far, spare):
    """How many whole frames past the frame's end a rope-rope search's pairs may hold, at
    most ``most``: the largest k for which, over the horizon T = ``remaining`` + k ``frame``
    [s], the predicted motion |v| T + |a| T^2 / 2 of the particles ``ids`` (v, a: rows of
    ``velocity`` (N, 3) [m/s], ``acceleration`` (N, 3) [m/s^2]) stays within ``far`` [m]
    for all and within ``reach`` [m] for all but ``spare`` of them. 0 where none qualifies.

    Why: a search's boxes hold each particle's path until its horizon, and a slowly sliding
    pile would otherwise be searched again at every frame's start; the bounds keep the boxes
    (and the candidate pairs) from growing with the longer look ahead."""
    counts = np.zeros(most + 2, dtype=np.int64)  # particles whose reach allows k - 1 frames
    allowed = most
    for index in range(ids.shape[0]):
        i = ids[index]
        speed = math.sqrt(velocity[i, 0] ** 2 + velocity[i, 1] ** 2 + velocity[i, 2] ** 2)
        pull = math.sqrt(acceleration[i, 0] ** 2 + acceleration[i, 1] ** 2
                         + acceleration[i, 2] ** 2)
        within_reach = _frames_within(speed, pull, reach, remaining, frame, most)
        counts[within_reach + 1] += 1
        allowed = min(allowed, _frames_within(speed, pull, far, remaining, frame, most))
    # the largest k with at most ``spare`` particles whose reach allows fewer frames than k
    short = 0
    best = 0
    for k in range(most + 1):
        short += counts[k]  # particles allowing k - 1 frames or fewer
        if short > spare or k > allowed:
            break
        best = k
    return best


@kernel
def _frames_within(speed, pull, distance, remaining, frame, most):
    """The whole frames (-1 .. ``most``) past the frame's end (``remaining`` [s] away, each
    ``frame`` [s]) before a motion |v| t + |a| t^2 / 2 (``speed`` [m/s], ``pull`` [m/s^2])
    covers ``distance`` [m]: -1 if it does within this frame."""
    if pull > 0.0:
        time = (math.sqrt(speed * speed + 2.0 * pull * distance) - speed) / pull
    elif speed > 0.0:
        time = distance / speed
    else:
        return most
    whole = math.floor((time - remaining) / frame)
    return min(max(whole, -1), most)
