%% The variant's options, as the request carries them (target.toml's
%% `options` table; spec/README.md, "The worker protocol"). They are what the
%% worker itself applies; how the VM starts (+S 1) is the variant's `args`.
%%
%%   message_queue_data = "off_heap" | "on_heap"   fanin's receiver, chat's groups
%%   yield = true | false                          chat stress: clients yield after
%%                                                 each send-and-take round
%%   active = false | "once" | N (N >= 1)          socket, both ends: passive reads,
%%                                                 {active, once}, or {active, N}
%%
%% An option a workload has no use for is accepted and has no effect there
%% (the default variant's message_queue_data in ring). An option not listed
%% here, or a value of the wrong kind, is an error naming it: a worker that
%% ignored it would measure something other than its variant says.
-module(msgbench_options).

-export([read/1]).

-export_type([options/0, socket_active/0]).

-type socket_active() :: false | once | pos_integer().

-type options() :: #{message_queue_data := off_heap | on_heap,
                     yield := boolean(),
                     active := socket_active()}.

%% What an option is when the variant does not set it: the BEAM's own
%% default (a process's queue on its heap, no yield, passive sockets).
defaults() ->
    #{message_queue_data => on_heap, yield => false, active => false}.

-spec read(term()) -> {ok, options()} | {error, iodata()}.
read(Options) when is_map(Options) ->
    Known = lists:sort([atom_to_binary(Key) || Key <- maps:keys(defaults())]),
    case lists:sort(maps:keys(Options)) -- Known of
        [] ->
            lists:foldl(fun(Name, {ok, Acc}) ->
                                case value(Name, maps:get(Name, Options)) of
                                    {ok, Key, Value} -> {ok, Acc#{Key => Value}};
                                    {error, _} = Error -> Error
                                end;
                           (_Name, Error) ->
                                Error
                        end, {ok, defaults()}, lists:sort(maps:keys(Options)));
        Unknown ->
            {error, ["unknown option ", lists:join(", ", Unknown),
                     " (known here: ", lists:join(", ", Known), ")"]}
    end;
read(Options) ->
    {error, ["options must be an object, not ", msgbench_json:encode(Options)]}.

value(<<"message_queue_data">>, <<"off_heap">>) -> {ok, message_queue_data, off_heap};
value(<<"message_queue_data">>, <<"on_heap">>) -> {ok, message_queue_data, on_heap};
value(<<"yield">>, Yield) when is_boolean(Yield) -> {ok, yield, Yield};
value(<<"active">>, false) -> {ok, active, false};
value(<<"active">>, <<"once">>) -> {ok, active, once};
value(<<"active">>, N) when is_integer(N), N >= 1 -> {ok, active, N};
value(Name, Value) ->
    {error, ["option ", Name, " = ", msgbench_json:encode(Value), ": expected ", expected(Name)]}.

expected(<<"message_queue_data">>) -> "\"off_heap\" or \"on_heap\"";
expected(<<"yield">>) -> "true or false";
expected(<<"active">>) -> "false, \"once\" or an integer >= 1".
