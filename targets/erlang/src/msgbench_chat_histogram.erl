%% The chat workload's latency histogram: log-linear buckets, exact below
%% 64 time units, then 64 buckets per power of two. A bucket is at most
%% 1/64 of its lower bound wide, so its midpoint is within 1/128 (0.8%) of
%% every value in it.
%%
%% Each receiving client records into its own histogram, kept in its
%% process dictionary under the bucket numbers (small integers; the client
%% keeps nothing else there under an integer key). That is the BEAM's one
%% mutable per-process table: counting a sample rewrites one entry instead
%% of rebuilding a map or tuple on every delivery, and memory is bounded by
%% the buckets a client's latencies actually span (at most ?BUCKETS
%% entries; a realistic client with a handful of deliveries holds a handful).
%%
%% After the drain every client adds its buckets into one shared counters
%% array (merge/1), in parallel; the coordinator reads the quantiles from it.
-module(msgbench_chat_histogram).

-export([record/1, samples/0, new_merged/0, merge/1, bucket/1, bounds/1,
         quantile/3, total/1]).

-export_type([merged/0]).

-type merged() :: counters:counters_ref().

%% Octave 0 holds 0..63 exactly; octave K >= 1 holds [2^(K+5), 2^(K+6)) in
%% 64 buckets of 2^(K-1). 58 octaves reach past 2^63.
-define(SUB_BITS, 6).
-define(SUB_BUCKETS, 64).
-define(OCTAVES, 58).
-define(BUCKETS, (?OCTAVES * ?SUB_BUCKETS)).

%% Counts one latency in the calling process's histogram (negative counts
%% as 0). Writes only integer keys of the process dictionary.
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
    counters:new(?BUCKETS, [write_concurrency]).

%% Adds the calling process's histogram into Merged.
-spec merge(merged()) -> ok.
merge(Merged) ->
    lists:foreach(fun({Bucket, Count}) -> counters:add(Merged, Bucket + 1, Count) end,
                  samples()).

-spec bucket(integer()) -> non_neg_integer().
bucket(Value) when Value < ?SUB_BUCKETS ->
    max(Value, 0);
bucket(Value) ->
    Top = top_bit(Value),                    % 2^Top =< Value < 2^(Top+1), Top >= 6
    Shift = Top - ?SUB_BITS,
    Octave = Shift + 1,
    case Octave < ?OCTAVES of
        true -> Octave * ?SUB_BUCKETS + (Value bsr Shift) - ?SUB_BUCKETS;
        false -> ?BUCKETS - 1                % past 2^63: the last bucket
    end.

%% The lowest value of a bucket and its width.
-spec bounds(non_neg_integer()) -> {non_neg_integer(), pos_integer()}.
bounds(Bucket) when Bucket < ?SUB_BUCKETS ->
    {Bucket, 1};
bounds(Bucket) ->
    Shift = Bucket div ?SUB_BUCKETS - 1,
    Index = Bucket rem ?SUB_BUCKETS,
    {(?SUB_BUCKETS + Index) bsl Shift, 1 bsl Shift}.

%% The position of the highest bit set (Value >= 1).
top_bit(Value) when Value >= 1 bsl 32 -> 32 + top_bit(Value bsr 32);
top_bit(Value) when Value >= 1 bsl 16 -> 16 + top_bit(Value bsr 16);
top_bit(Value) when Value >= 1 bsl 8 -> 8 + top_bit(Value bsr 8);
top_bit(Value) when Value >= 1 bsl 4 -> 4 + top_bit(Value bsr 4);
top_bit(Value) when Value >= 1 bsl 2 -> 2 + top_bit(Value bsr 2);
top_bit(Value) when Value >= 2 -> 1;
top_bit(_) -> 0.

%% Samples counted in Merged.
-spec total(merged()) -> non_neg_integer().
total(Merged) ->
    lists:sum([counters:get(Merged, I) || I <- lists:seq(1, ?BUCKETS)]).

%% The Q-quantile (0 < Q =< 1) by nearest rank: the ceil(Q * count)-th
%% smallest sample, as the midpoint of its bucket (exact below 64), never
%% above Max, the largest sample, which the clients keep exactly. 0 when
%% there are no samples.
-spec quantile(merged(), float(), non_neg_integer()) -> non_neg_integer().
quantile(Merged, Q, Max) ->
    Counts = [counters:get(Merged, I) || I <- lists:seq(1, ?BUCKETS)],
    case lists:sum(Counts) of
        0 -> 0;
        Total -> Rank = min(max(ceil(Q * Total), 1), Total),
                 at_rank(Counts, 0, Rank, 0, Max)
    end.

at_rank([Count | Rest], Bucket, Rank, Seen, Max) ->
    case Seen + Count >= Rank of
        true ->
            {Lower, Width} = bounds(Bucket),
            min(Lower + (Width - 1) div 2, Max);
        false ->
            at_rank(Rest, Bucket + 1, Rank, Seen + Count, Max)
    end.
