%% The variant's options, as the request carries them (target.toml's
%% `options` table; spec/README.md, "The worker protocol"), read against a
%% target's own table of them: a module with this behaviour, named in the
%% worker's spec (e.g. targets/erlang's msgbench_erlang_options).
%%
%% An option a workload has no use for is accepted and has no effect there.
%% An option the table does not list, or a value of the wrong kind, is an
%% error naming it: a worker that ignored it would measure something other
%% than its variant says. The unknown-option error lists what the worker
%% knows as `(known here: ...)`, which tests/test_conformance.py compares
%% with what target.toml's variants set.
-module(msgbench_options).

-export([read/2]).

%% Every option the target knows, by its name in the request (as an atom),
%% with the value it has when the variant does not set it.
-callback defaults() -> #{atom() => term()}.

%% One value from the decoded request to what the workloads take, or what
%% the option accepts (for the error).
-callback value(Name :: atom(), Json :: term()) -> {ok, term()} | {error, Expected :: iodata()}.

-spec read(module(), term()) -> {ok, #{atom() => term()}} | {error, iodata()}.
read(Table, Options) when is_map(Options) ->
    Defaults = Table:defaults(),
    Keys = maps:from_list([{atom_to_binary(Key), Key} || Key <- maps:keys(Defaults)]),
    Known = lists:sort(maps:keys(Keys)),
    case lists:sort(maps:keys(Options)) -- Known of
        [] ->
            lists:foldl(fun(Name, {ok, Acc}) ->
                                Key = maps:get(Name, Keys),
                                Value = maps:get(Name, Options),
                                case Table:value(Key, Value) of
                                    {ok, Read} -> {ok, Acc#{Key => Read}};
                                    {error, Expected} -> {error, wrong_kind(Name, Value, Expected)}
                                end;
                           (_Name, Error) ->
                                Error
                        end, {ok, Defaults}, lists:sort(maps:keys(Options)));
        Unknown ->
            {error, ["unknown option ", lists:join(", ", Unknown),
                     " (known here: ", lists:join(", ", Known), ")"]}
    end;
read(_Table, Options) ->
    {error, ["options must be an object, not ", msgbench_json:encode(Options)]}.

wrong_kind(Name, Value, Expected) ->
    ["option ", Name, " = ", msgbench_json:encode(Value), ": expected ", Expected].
