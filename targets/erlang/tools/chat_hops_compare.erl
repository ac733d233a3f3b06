%% What a gen_server would cost on the chat path (README, "chat: mapping to
%% seed 003"): a chain of four forwarders, the four hops of a chat message,
%% as plain receive loops (what msgbench_chat_user and msgbench_chat_group
%% are) and as gen_servers taking casts. 1,000,000 messages of the chat
%% shape are pipelined through each chain, 100 at a time; the chains
%% alternate, RUNS times each.
%%
%%   erlc -o /tmp tools/chat_hops_compare.erl && erl -noshell -pa /tmp -run chat_hops_compare main 3
-module(chat_hops_compare).

-behaviour(gen_server).

-export([main/1]).
%% gen_server callbacks, and the plain forwarder (spawned).
-export([init/1, handle_call/3, handle_cast/2, plain/1]).

-define(MESSAGES, 1000000).
-define(HOPS, 4).
-define(BATCH, 100).

-type next() :: {plain | gen_server, pid()}.

-spec main([string()]) -> no_return().
main([RunsArg]) ->
    Runs = list_to_integer(RunsArg),
    io:format("~w messages through ~w forwarders, ~w scheduler(s)~n",
              [?MESSAGES, ?HOPS, erlang:system_info(schedulers_online)]),
    Times = [{Kind, chain(Kind)} || _ <- lists:seq(1, Runs), Kind <- [plain, gen_server]],
    [io:format("~-10s ~8.1f ns per message~n", [Kind, Ns]) || {Kind, Ns} <- Times],
    erlang:halt(0).

%% Nanoseconds per message through a fresh chain of Kind forwarders.
chain(Kind) ->
    Self = self(),
    Sink = spawn(fun() -> sink(Self, ?MESSAGES) end),
    Head = lists:foldl(fun(_, Next) -> forwarder(Kind, Next) end, {plain, Sink},
                       lists:seq(1, ?HOPS)),
    Message = {post, 3, {chat, 1, 2, erlang:monotonic_time(), <<"I've been mad">>}},
    Start = erlang:monotonic_time(),
    send_batches(Head, Message, ?MESSAGES div ?BATCH),
    receive done -> ok end,
    erlang:convert_time_unit(erlang:monotonic_time() - Start, native, nanosecond) / ?MESSAGES.

forwarder(plain, Next) ->
    {plain, spawn(?MODULE, plain, [Next])};
forwarder(gen_server, Next) ->
    {ok, Pid} = gen_server:start(?MODULE, Next, []),
    {gen_server, Pid}.

send_batches(_Head, _Message, 0) ->
    ok;
send_batches(Head, Message, Batches) ->
    lists:foreach(fun(_) -> forward(Head, Message) end, lists:seq(1, ?BATCH)),
    erlang:yield(),
    send_batches(Head, Message, Batches - 1).

forward({plain, Pid}, Message) -> Pid ! Message;
forward({gen_server, Pid}, Message) -> gen_server:cast(Pid, Message).

sink(Parent, 0) ->
    Parent ! done;
sink(Parent, Left) ->
    receive {post, _, _} -> sink(Parent, Left - 1) end.

-spec plain(next()) -> no_return().
plain(Next) ->
    receive
        {post, _, _} = Message ->
            forward(Next, Message),
            plain(Next)
    end.

-spec init(next()) -> {ok, next()}.
init(Next) ->
    {ok, Next}.

-spec handle_cast({post, pos_integer(), tuple()}, next()) -> {noreply, next()}.
handle_cast({post, _, _} = Message, Next) ->
    forward(Next, Message),
    {noreply, Next}.

-spec handle_call(term(), gen_server:from(), next()) -> {reply, ok, next()}.
handle_call(_Request, _From, Next) ->
    {reply, ok, Next}.
