%% A latency histogram (the chat workload's), in the harness's layout
%% (msgbench/histogram.py; spec/README.md): log-linear, values in ns, exact
%% below 128, then 64 buckets per power of two. For v >= 128:
%% shift = bit_length(v) - 7, bucket = shift * 64 + (v bsr shift). The
%% harness alone turns the counts into percentiles.
%%
%% Each receiving client records into its own histogram, kept in its
%% process dictionary under the bucket numbers (small integers; the client
%% keeps nothing else there under an integer key). That is the BEAM's one
%% mutable per-process table: counting a sample rewrites one entry instead
%% of rebuilding a map or tuple on every delivery, and memory is bounded by
%% the buckets a client's latencies actually span (a realistic client with a
%% handful of deliveries holds a handful).
%%
%% After the drain every client adds its buckets into one shared counters
%% array (merge/1), in parallel; the coordinator reads it out as the sparse
%% [[bucket, count], ...] list the result carries (pairs/1).
-module(msgbench_histogram).

-export([record/1, samples/0, new_merged/0, merge/1, bucket/1, pairs/1]).

-export_type([merged/0]).

-type merged() :: counters:counters_ref().

-define(SUB_BUCKETS, 64).
-define(EXACT_BELOW, 128).
%% The bucket of 2^63 - 1, the largest count of ns a signed 64-bit clock
%% reaches: 56 * 64 + 127. Larger values are counted there.
-define(LAST_BUCKET, 3711).

%% Counts one latency (ns) in the calling process's histogram (negative
%% counts as 0). Writes only integer keys of the process dictionary.
-spec record(integer()) -> ok.
record(Value) ->
    Bucket = bucket(Value),
    _ = case get(Bucket) of
            undefined -> put(Bucket, 1);
            Count -> put(Bucket, Count + 1)
        end,
    ok.

%% The calling process's histogram: [{Bucket, Count}].
-spec samples() -> [{non_neg_integer(), pos_integer()}].
samples() ->
    [Entry || {Bucket, _} = Entry <- get(), is_integer(Bucket)].

%% One shared array every client can add its buckets to at once.
-spec new_merged() -> merged().
new_merged() ->
    counters:new(?LAST_BUCKET + 1, [write_concurrency]).

%% Adds the calling process's histogram into Merged.
-spec merge(merged()) -> ok.
merge(Merged) ->
    lists:foreach(fun({Bucket, Count}) -> counters:add(Merged, Bucket + 1, Count) end,
                  samples()).

%% The bucket of a value in ns.
-spec bucket(integer()) -> non_neg_integer().
bucket(Value) when Value < ?EXACT_BELOW ->
    max(Value, 0);
bucket(Value) ->
    Shift = bit_length(Value) - 7,
    min(Shift * ?SUB_BUCKETS + (Value bsr Shift), ?LAST_BUCKET).

%% The number of bits of Value >= 1.
bit_length(Value) when Value >= 1 bsl 32 -> 32 + bit_length(Value bsr 32);
bit_length(Value) when Value >= 1 bsl 16 -> 16 + bit_length(Value bsr 16);
bit_length(Value) when Value >= 1 bsl 8 -> 8 + bit_length(Value bsr 8);
bit_length(Value) when Value >= 1 bsl 4 -> 4 + bit_length(Value bsr 4);
bit_length(Value) when Value >= 1 bsl 2 -> 2 + bit_length(Value bsr 2);
bit_length(Value) when Value >= 2 -> 2;
bit_length(_) -> 1.

%% Merged as the result's sparse histogram: [[Bucket, Count]] for every
%% bucket with Count > 0, in bucket order.
-spec pairs(merged()) -> [[non_neg_integer()]].
pairs(Merged) ->
    [[Bucket, Count] || Bucket <- lists:seq(0, ?LAST_BUCKET),
                        Count <- [counters:get(Merged, Bucket + 1)], Count > 0].
