#!/usr/bin/env python3
"""Builds Mira's LoCoMo-like memory recall dev set: eval/recall/dev.jsonl.

Long multi-session chats between two named speakers (each session dated), with realistic
filler chit-chat, and questions whose evidence is one or more dialogue turns ("D3:7"):

  single_hop  one turn answers it; the question shares some words with that turn
  multi_hop   two turns are needed (e.g. "Biscuit is my new beagle" + "Biscuit chewed my
              shoes" -> "What did X's dog chew?"); any evidence turn in the top k is a hit,
              the eval also reports "all evidence in top k"
  temporal    "when did X ..." answered by a turn of a dated session ("... last weekend")
  preference  likes and dislikes
  paraphrase  the question shares no content word with the evidence turn (speaker names
              aside): "What furry companion joined X's household?" vs "we adopted a beagle
              puppy"; checked by this script with a stop list and a crude stemmer

Everything is invented (names, places, books, bands); no text comes from LoCoMo.
Deterministic: a fixed seed, Python's own `random` (Mersenne Twister, stable across versions).

Run: python3 eval/recall/build_dev.py   (rewrites eval/recall/dev.jsonl, prints the shape)
"""
import datetime as dt
import json
import random
import re
import sys
from collections import Counter
from pathlib import Path

SEED = 20261125
HERE = Path(__file__).parent
N_CONVS = 9

# ----------------------------------------------------------------------------- tokens
STOP = set("""
a about above after again against all am an and any are aren't as at be because been before
being below between both but by can could did didn't do does doing don't down during each
few for from further had has have having he he'd he's her here here's hers herself him
himself his how how's i i'd i'm i've if in into is isn't it it's its itself just let's me
more most my myself no nor not now of off on once only or other ought our ours ourselves out
over own same she she'd she's should so some such than that that's the their theirs them
themselves then there there's these they they'd they're this those through to too under
until up very was wasn't we we'd we're we've were what what's when when's where where's
which while who who's whom why why's will with won't would you you'd you'll you're you've
your yours yourself yourselves get got gets getting go went going goes gone one ones also
really like just so oh yeah yes hey hi ok okay lot lots much many thing things still even
ever every way make made makes new recently since last ago first kind sort well
""".split())


def stem(w):
    w = w.lower().strip("'")
    if w.endswith("'s"):
        w = w[:-2]
    for suf in ("ings", "ing", "edly", "ed", "ies", "es", "s", "ly"):
        if w.endswith(suf) and len(w) - len(suf) >= 3:
            w = w[: -len(suf)]
            break
    return w


def content(text, names=()):
    names = {n.lower() for n in names}
    toks = re.findall(r"[A-Za-z0-9']+", text)
    out = set()
    for t in toks:
        lt = t.lower().strip("'")
        if lt.endswith("'s"):
            lt = lt[:-2]
        if lt in STOP or lt in names or len(lt) < 2:
            continue
        out.add(stem(lt))
    return out


# ----------------------------------------------------------------------------- pools
FIRST = """Avery Bianca Caleb Dalia Elias Farah Gideon Hana Ivo Jolene Kofi Lena Marco Nadia
Oskar Priya Quentin Rosa Soren Tamsin Umar Vera Wes Yara Zane Ines Theo Mila Rafael Saskia""".split()
SIB_F = "Nora Greta Lucy Anya Beth Iris Maya Ruth".split()
SIB_M = "Felix Jonah Arlo Milo Omar Peter Silas Tomas".split()
PARTNERS = "Dana Jamie Robin Sam Alex Morgan Casey Kit".split()
KIDS_F = "Ella Zoe Ava Lily Ada".split()
KIDS_M = "Leo Max Finn Eli Noah".split()
PET_NAMES = "Biscuit Pepper Waffles Juniper Mochi Olive Pickles Hazel Nugget Clover Ziggy Maple".split()
CITIES = "Lisbon Portland Edinburgh Denver Montreal Valencia Tucson Leipzig Halifax Boulder Porto Ghent".split()
DESTS = "Japan Iceland Morocco Peru Vietnam Greece Norway Mexico Croatia Portugal".split()
DISH = {"Japan": "okonomiyaki", "Iceland": "lamb soup", "Morocco": "chicken tagine", "Peru": "ceviche",
        "Vietnam": "pho", "Greece": "spanakopita", "Norway": "fish soup", "Mexico": "tacos al pastor",
        "Croatia": "black risotto", "Portugal": "custard tarts"}
BANDS = "The Velvet Orchards|Paper Lanterns|Northbound Static|Mina and the Tides|Glass Harbor|The Quiet Foxes|Saltwater Radio|Copper Sky".split("|")
VENUES = "Orpheum|riverside amphitheater|Blue Door Hall|old opera house|Fillmore Annex|harbor pavilion".split("|")
BOOKS = [("The Lighthouse Ledger", "Maren Holt"), ("A Map of Small Hours", "Tobias Crane"),
         ("Salt and Iron", "Ingrid Voss"), ("The Orchard Keeper's Daughter", "Lila Moreno"),
         ("Winter Apprentice", "Dev Kapoor"), ("Nine Bridges", "Hollis Park"),
         ("The Cartographer's Dog", "Abel Serrano"), ("Quiet Machines", "June Okafor")]
AUTHORS = ["Maren Holt", "Tobias Crane", "Ingrid Voss", "Lila Moreno", "Dev Kapoor", "June Okafor"]

# ----------------------------------------------------------------------------- bank
# Each event: slots(rng) -> dict; "intro": evidence turn templates (said by the speaker S);
# "react": the other speaker's reaction; "detail": S's elaboration (never holds an answer);
# "single": [(question, answer)]; "temporal": questions (intro must carry {when});
# "para": questions checked to share no content word with the intro actually used;
# "follow": [(later turn by S, multi-hop question, answer)].
# Placeholders: {S} speaker, {O} other, {sp} subject pronoun, {pos} possessive, {obj} object.


def pick(rng, xs):
    return xs[rng.randrange(len(xs))]


def s_pet(r):
    animal, young, breed = pick(r, [("dog", "puppy", "beagle"), ("dog", "puppy", "corgi"),
                                    ("dog", "puppy", "border collie"), ("cat", "kitten", "tabby"),
                                    ("cat", "kitten", "Maine Coon"), ("rabbit", "bunny", "lop-eared")])
    return dict(animal=animal, young=young, breed=breed, pet=pick(r, PET_NAMES))


def s_job(r):
    role, org = pick(r, [("pediatric nurse", "St. Brigid's Hospital"), ("backend developer", "a logistics startup called Tern"),
                         ("third-grade teacher", "Maplewood Elementary"), ("sous chef", "a bistro called Fennel"),
                         ("graphic designer", "Brightline Studio"), ("data analyst", "the county water department"),
                         ("physical therapist", "Harbor Sports Clinic"), ("librarian", "the Eastside branch library")])
    return dict(role=role, org=org, org_short=org.split()[-1])


def s_move(r):
    return dict(city=pick(r, CITIES))


def s_instr(r):
    return dict(instrument=pick(r, ["guitar", "piano", "violin", "cello", "ukulele", "saxophone", "drums"]),
                teacher=pick(r, ["Mrs. Okafor", "Mr. Lindqvist", "Rosalind", "Teodor", "Ms. Baptiste", "Hugo"]))


def s_trip(r):
    d = pick(r, DESTS)
    return dict(dest=d, dish=DISH[d], companion=pick(r, ["mom", "best friend", "cousin", "partner", "dad", "college roommate"]))


def s_race(r):
    return dict(race=pick(r, ["half marathon", "10K", "marathon", "sprint triathlon", "trail race"]),
                city=pick(r, CITIES), time=pick(r, ["two hours", "fifty minutes", "four and a half hours", "ninety minutes"]))


def s_sib(r):
    if r.random() < 0.5:
        return dict(rel="sister", sib=pick(r, SIB_F), sp2="She", city=pick(r, CITIES))
    return dict(rel="brother", sib=pick(r, SIB_M), sp2="He", city=pick(r, CITIES))


def s_car(r):
    car = pick(r, ["used Subaru Outback", "red Honda Civic", "all-electric Nissan Leaf", "silver Toyota RAV4", "vintage VW camper van"])
    return dict(car=car, car_short=car.split()[-1] if "camper" not in car else "camper van")


def s_injury(r):
    inj, q, act = pick(r, [("sprained my ankle", "sprain an ankle", "playing pickup basketball"),
                           ("broke my wrist", "break a wrist", "on an icy sidewalk"),
                           ("pulled a muscle in my back", "hurt their back", "moving a couch up three flights of stairs"),
                           ("tore a ligament in my knee", "injure a knee", "skiing")])
    return dict(injury=inj, injury_q=q, activity=act)


def s_class(r):
    craft, artifact = pick(r, [("pottery", "lopsided mug"), ("watercolor painting", "painting of a heron"),
                               ("woodworking", "little spice rack"), ("stained glass", "sun catcher")])
    return dict(craft=craft, artifact=artifact, place=pick(r, ["community center", "art studio on Pine Street", "adult school downtown"]))


def s_vol(r):
    return dict(vorg=pick(r, ["animal shelter", "food bank", "soup kitchen", "adult literacy program", "community garden"]))


def s_book(r):
    b, a = pick(r, BOOKS)
    return dict(book=b, author=a)


def s_garden(r):
    return dict(crop=pick(r, ["tomatoes", "zucchini", "strawberries", "jalapeños", "snap peas"]))


def s_biz(r):
    desc, name, product = pick(r, [("selling sourdough loaves at the Saturday farmers market", "Rise & Crumb", "loaves"),
                                   ("making soy candles and selling them online", "Wick & Wander", "candles"),
                                   ("a weekend dog-walking service", "Happy Tails Walks", "walks"),
                                   ("hand-lettered wedding invitations", "Inkwell Notes", "invitations"),
                                   ("custom knitted baby blankets", "Purl Cottage", "blankets")])
    return dict(biz_desc=desc, bizname=name, product=product)


def s_concert(r):
    return dict(band=pick(r, BANDS), venue=pick(r, VENUES))


def s_kid(r):
    if r.random() < 0.5:
        kid, rel = pick(r, KIDS_F), "daughter"
    else:
        kid, rel = pick(r, KIDS_M), "son"
    ms, q = pick(r, [("took the first steps", "take the first steps"), ("lost the first tooth", "lose the first tooth"),
                     ("started kindergarten", "start kindergarten"), ("learned to ride a bike without training wheels", "learn to ride a bike")])
    return dict(kid=kid, child_rel=rel, milestone=ms, milestone_q=q)


def s_recipe(r):
    return dict(dish=pick(r, ["pierogi", "chicken adobo", "lasagna", "matzo ball soup", "jollof rice", "goulash"]),
                elder=pick(r, ["grandma", "nana", "abuela", "grandpa"]))


def s_reno(r):
    return dict(room=pick(r, ["kitchen", "bedroom", "living room", "bathroom"]),
                color=pick(r, ["sage green", "deep navy", "warm terracotta", "pale yellow"]))


def s_stolen(r):
    return dict(item=pick(r, ["bike", "laptop bag", "scooter"]), spot=pick(r, ["the library", "the gym", "the train station"]))


def s_camp(r):
    return dict(park=pick(r, ["Pinecrest Lake", "Red Rock Canyon", "Cedar Hollow", "Eagle Point"]),
                wild=pick(r, ["a black bear", "a moose", "a pair of bald eagles", "a family of foxes"]))


def s_climb(r):
    return dict(freq=pick(r, ["three times a week", "every Tuesday and Thursday", "four nights a week"]))


def s_grand(r):
    return dict(gp=pick(r, ["grandmother", "grandfather"]), age=pick(r, ["ninety", "eighty-five", "one hundred"]))


def s_anniv(r):
    return dict(partner=pick(r, PARTNERS), n=pick(r, ["fifth", "tenth", "first", "twentieth"]),
                rest=pick(r, ["Luca's Trattoria", "the Blue Heron", "Casa Verde", "the rooftop place downtown"]),
                city=pick(r, CITIES))


def s_med(r):
    return dict(mins=pick(r, ["ten", "fifteen", "twenty"]))


def s_exam(r):
    return dict(exam=pick(r, ["CPA", "bar", "nursing board", "AWS certification", "real estate license"]))


EVENTS = {
    "pet": dict(slots=s_pet, ask=[("Wait, did you end up getting that {animal} you kept talking about?", "We did, {when}! A {breed} {young}, and her name is {pet}.")],
        intro=[
        "Big news: {when} we adopted a {breed} {young} from the shelter! We named her {pet}.",
        "So {when} I finally brought home a little {breed} {young}. Her name is {pet} and she already runs the place.",
        "Guess who has a new roommate? A tiny {breed} {young} called {pet}, I picked her up {when}."],
        react=["Aww, a {young}! You have to send me pictures.", "That's so exciting! Are you getting any sleep?",
               "I've always wanted a {animal}. How is the first week going?"],
        detail=["She's still figuring out where she's allowed to nap, but we're getting there.",
                "Honestly the kids are obsessed, they fight over who gets to feed her."],
        single=[("What is the name of {S}'s {animal}?", "{pet}"), ("What breed is {S}'s {animal}?", "{breed}")],
        temporal=["When did {S} adopt a {animal}?", "When did the {young} join {S}'s family?", "When did {S} become a {animal} owner?"],
        para=[("Which furry companion joined {S}'s household?", "a {breed} {young} named {pet}"), ("Who is the newest four-legged member of {S}'s family?", "{pet}, a {breed} {young}")],
        follow=[("{pet} chewed through my favourite running shoes this morning, I can't even be mad.", "What did {S}'s {animal} chew up?", "running shoes"),
                ("Took {pet} to the vet for her shots yesterday and she didn't even flinch.", "Where did {S} take {pos} {animal} for vaccinations?", "the vet"),
                ("{pet} learned to sit and roll over in one week, I'm so proud of her.", "What tricks has {S}'s {animal} learned?", "sit and roll over")]),
    "job": dict(slots=s_job, ask=[("So how did the job hunt end up going?", "They called {when}: I start as a {role} at {org} next month!")],
        intro=[
        "I have news: I accepted an offer {when} and I'm starting as a {role} at {org}!",
        "So {when} I signed the contract. I'm officially the new {role} at {org}.",
        "Remember that interview I was nervous about? They called {when}, I got the {role} position at {org}!"],
        react=["Congrats!! That's huge, you totally deserve it.", "No way! When do you start?", "That's amazing, {S}! You must be so relieved."],
        detail=["First day is Monday, I already picked out an outfit.", "The commute is longer, but the team seems really kind."],
        single=[("What job did {S} get?", "{role}"), ("Where does {S} work now?", "{org}")],
        temporal=["When did {S} accept the {role} job?", "When did {S} land the new position?", "When did {S} find out about the job offer?"],
        para=[("What is {S}'s current occupation?", "{role}"), ("Which employer hired {S}?", "{org}")],
        follow=[("My manager put me in charge of training the summer interns already. Week three!", "What is {S} responsible for in the {role} role?", "training the summer interns"),
                ("We had our first team outing last Friday, bowling, and I came dead last.", "What did {S} do with the coworkers from {org}?", "bowling")]),
    "move": dict(slots=s_move, ask=[("Did you ever decide where you're moving?", "Yep, {city}! We signed the lease {when}.")],
        intro=[
        "We finally moved! {when} we signed the lease on a place in {city}.",
        "Big change: I packed up everything and relocated to {city} {when}.",
        "The movers came {when}. I live in {city} now, can you believe it?"],
        react=["Whoa, {city}! How does it feel?", "Moving is the worst, I hope you're unpacked by now."],
        detail=["The apartment is tiny but the light in the mornings is gorgeous.", "I still have boxes everywhere, I can't find a single mug."],
        single=[("Which city did {S} move to?", "{city}"), ("Where does {S} live now?", "{city}")],
        temporal=["When did {S} move to {city}?", "When did {S} change cities?", "When did {S} leave the old apartment behind?"],
        para=[("In what town is {S}'s current residence?", "{city}"), ("Where is {S}'s home these days?", "{city}")],
        follow=[("There's a tiny bakery around the corner from the new apartment, their cardamom buns are unreal.", "What pastry does {S} love near {pos} place in {city}?", "cardamom buns")]),
    "instr": dict(slots=s_instr, ask=[("Are you still thinking about learning an instrument?", "I actually started {when}! {teacher} is teaching me {instrument}.")],
        intro=[
        "I started taking {instrument} lessons {when}! My teacher, {teacher}, is super patient with me.",
        "{When} I finally bought a {instrument} and booked weekly lessons with a teacher called {teacher}."],
        react=["That's so cool! Play me something next time.", "I tried learning an instrument once... my neighbours were not fans."],
        detail=["My fingers hurt constantly but I love it.", "I practice for half an hour every night after dinner."],
        single=[("What instrument is {S} learning?", "{instrument}"), ("Who teaches {S} {instrument}?", "{teacher}")],
        temporal=["When did {S} start {instrument} lessons?", "When did {S} begin studying music?"],
        para=[("Which musical skill is {S} picking up?", "{instrument}")],
        follow=[("{teacher} says I'm ready to play at the spring recital. I'm terrified!", "What is {S} preparing for with {pos} {instrument} teacher?", "the spring recital")]),
    "trip": dict(slots=s_trip, ask=[("Where did you end up going on vacation?", "{dest}! We flew out {when}, me and my {companion}.")],
        intro=[
        "We just got back from {dest}! We flew out {when} with my {companion} and it was incredible.",
        "{When} I went to {dest} with my {companion}. First real vacation in years."],
        react=["Jealous! What was the highlight?", "Oh wow, {dest} has been on my list forever."],
        detail=["We walked something like twenty kilometres a day.", "I took about a thousand photos, I'll show you some."],
        single=[("Where did {S} travel with {pos} {companion}?", "{dest}"), ("Who went to {dest} with {S}?", "{pos} {companion}")],
        temporal=["When did {S} go to {dest}?", "When was {S} abroad on holiday?", "When did {S} take the big overseas vacation?"],
        para=[("Which country did {S} visit abroad?", "{dest}")],
        follow=[("Still dreaming about the food from that trip, I keep trying to recreate the {dish} at home.", "What dish from {S}'s {dest} trip is {sp} trying to cook?", "{dish}")]),
    "race": dict(slots=s_race, intro=[
        "{When} I ran my first {race} in {city}! My legs are still sore.",
        "Finished the {race} in {city} {when}, under {time}!"],
        react=["You're a machine! Congrats!", "I get tired walking to the mailbox, that's incredible."],
        detail=["I trained for months, mostly on the treadmill at night.", "The last mile was pure stubbornness."],
        single=[("What race did {S} run in {city}?", "{race}"), ("Where did {S} run the {race}?", "{city}")],
        temporal=["When did {S} run the {race}?", "When was {S}'s big running event?"],
        para=[("Which athletic event did {S} complete?", "a {race} in {city}")],
        follow=[("My coach thinks I could do a full Ironman next year. Am I crazy?", "What is {S} considering next after the {race} in {city}?", "a full Ironman")]),
    "sib": dict(slots=s_sib, intro=[
        "My {rel} {sib} lives in {city}, {sp2_l}'s the one who got me into hiking.",
        "I'm visiting my {rel} {sib} soon, {sp2_l} moved to {city} for grad school a while back."],
        react=["I didn't know you had a {rel}! Are you two close?", "{city} is lovely, you'll have fun."],
        detail=["We talk on the phone almost every Sunday.", "We fought constantly as kids and now we're best friends."],
        single=[("Where does {S}'s {rel} live?", "{city}"), ("What is the name of {S}'s {rel}?", "{sib}")],
        para=[("In which city does {S}'s sibling reside?", "{city}")],
        follow=[("{sib} just got engaged! {sp2} called me at midnight screaming.", "Which of {S}'s relatives in {city} got engaged?", "{pos} {rel} {sib}"),
                ("{sib} is coming to stay with me for a whole week next month.", "Who from {city} is staying with {S} next month?", "{pos} {rel} {sib}")]),
    "car": dict(slots=s_car, ask=[("Are you still taking the bus everywhere?", "Not anymore, I bought a {car} {when}!")],
        intro=[
        "I finally traded in my old car {when}, I got a {car}!",
        "{When} I drove home a {car}. No more begging for rides!"],
        react=["Nice! Road trip soon?", "Ooh, fancy. How does it drive?"],
        detail=["It still smells new, I don't want to eat in it ever.", "The payments are a bit scary but it's worth it."],
        single=[("What car did {S} buy?", "{car}")],
        temporal=["When did {S} buy the {car_short}?", "When did {S} get new wheels?", "When did {S} replace the old vehicle?"],
        para=[("Which vehicle does {S} own these days?", "a {car}")],
        follow=[("Took the new wheels up the coast last weekend, six hundred miles without a single hiccup.", "How far did {S} drive the {car_short} on the coast trip?", "six hundred miles")]),
    "injury": dict(slots=s_injury, ask=[("Why haven't you been at the gym lately?", "I {injury} {when}, {activity}. Six weeks of rest, doctor's orders.")],
        intro=[
        "Ugh, I {injury} {when} {activity}. Doctor says six weeks of rest.",
        "So I {injury} {when}, {activity} of all things. I'm stuck on the couch."],
        react=["Oh no! I'm so sorry, is there anything I can do?", "That sounds awful. Feel better soon!"],
        detail=["The worst part is not being able to do anything myself.", "I'm catching up on every show I ever skipped."],
        single=[("How did {S} get hurt?", "{activity}"), ("What injury did {S} suffer?", "{injury}")],
        temporal=["When did {S} {injury_q}?", "When did {S} get hurt?"],
        para=[("What accident left {S} laid up?", "{injury} {activity}")]),
    "class": dict(slots=s_class, intro=[
        "I signed up for a {craft} class at the {place} {when}. It meets every Thursday evening.",
        "{When} I joined a {craft} class at the {place}, I've wanted to do it for years."],
        react=["That sounds so relaxing.", "You'll have to make me something!"],
        detail=["Everyone else in the group is retired and they're all way better than me.", "It's the one hour a week I don't look at my phone."],
        single=[("What class did {S} sign up for?", "{craft}"), ("Where does {S} take {craft} classes?", "the {place}")],
        temporal=["When did {S} join the {craft} class?", "When did {S} enroll in an art course?"],
        para=[("Which creative pastime does {S} pursue on weeknights?", "{craft}")],
        follow=[("I finished my first piece in class this week, a {artifact}, and gave it to my mom.", "What did {S} make in {craft} class for {pos} mother?", "a {artifact}")]),
    "vol": dict(slots=s_vol, intro=[
        "{When} I started volunteering at the {vorg} on Saturdays. It's been so meaningful.",
        "I've been helping out at the {vorg} every Saturday since {when}."],
        react=["That's really lovely of you.", "How did you find out about it?"],
        detail=["Some of the regulars know me by name now.", "It puts my own little worries in perspective."],
        single=[("Where does {S} volunteer?", "the {vorg}")],
        temporal=["When did {S} start volunteering at the {vorg}?", "When did {S} begin giving time to a charity?"],
        para=[("What unpaid community work does {S} do on weekends?", "volunteering at the {vorg}")],
        follow=[("They asked me to coordinate the whole Saturday crew now, which is a big responsibility.", "What new role did {S} take on at the {vorg}?", "coordinating the Saturday crew")]),
    "book": dict(slots=s_book, intro=[
        "I'm halfway through '{book}' by {author}, I stayed up way too late reading it {when}.",
        "Have you read '{book}'? {author} wrote it and I can't put it down."],
        react=["Ooh, add it to my list!", "I haven't! What's it about?"],
        detail=["No spoilers, but the ending of part one wrecked me.", "I'm going to need a book hangover day after this."],
        single=[("What book is {S} reading?", "{book}"), ("Who wrote the novel {S} is reading?", "{author}")],
        para=[("Which story has been keeping {S} awake at night?", "{book}")],
        follow=[("{author} is doing a signing at the downtown library next month and I already have my ticket!", "Where will the author of the novel {S} was reading hold a signing?", "the downtown library")]),
    "garden": dict(slots=s_garden, intro=[
        "My balcony garden is going wild, I harvested my first {crop} {when}!",
        "{When} I picked the first {crop} from my little garden. So proud."],
        react=["Gardening goals!", "I kill every plant I touch, teach me."],
        detail=["The squirrels keep stealing from it though.", "I've been watering every morning before work."],
        single=[("What did {S} grow in {pos} garden?", "{crop}")],
        temporal=["When did {S} harvest {pos} first {crop}?", "When did {S}'s plants first produce something to eat?"],
        para=[("What produce came out of {S}'s planting project?", "{crop}")]),
    "biz": dict(slots=s_biz, intro=[
        "I'm launching a little side business: {biz_desc}. I'm calling it {bizname}.",
        "{When} I registered my side hustle, {bizname}. It's {biz_desc}."],
        react=["That's awesome! Can I be your first customer?", "You're so brave, I'd never have the guts."],
        detail=["My kitchen has basically become a workshop.", "I made the logo myself at two in the morning."],
        single=[("What is the name of {S}'s side business?", "{bizname}"), ("What is {S}'s side business?", "{biz_desc}")],
        temporal=["When did {S} register {bizname}?", "When did {S} make the small company official?"],
        para=[("What entrepreneurial venture did {S} begin outside of work?", "{bizname}: {biz_desc}")],
        follow=[("{bizname} got its first big order this week, fifty {product} for a wedding!", "How big was the wedding order for {S}'s side business?", "fifty {product}")]),
    "concert": dict(slots=s_concert, intro=[
        "{When} I saw {band} live at the {venue}. Best concert of my life.",
        "I finally caught {band} at the {venue} {when}, I'm still buzzing."],
        react=["I'm so jealous, I love them!", "Was it loud? I bet it was loud."],
        detail=["I lost my voice from singing along.", "We waited outside for two hours to get near the stage."],
        single=[("Which band did {S} see live?", "{band}"), ("Where did {S} see {band}?", "the {venue}")],
        temporal=["When did {S} go to the {band} concert?", "When did {S} see a band perform?"],
        para=[("What musical performance did {S} attend?", "{band} at the {venue}")]),
    "kid": dict(slots=s_kid, intro=[
        "My {child_rel} {kid} {milestone} {when}! I cried a little, not gonna lie.",
        "Big moment in our house: {kid} {milestone} {when}."],
        react=["Aww, they grow up so fast!", "That's such a sweet milestone."],
        detail=["I have about forty videos of it.", "We celebrated with pancakes for dinner."],
        single=[("What did {S}'s {child_rel} {kid} do?", "{milestone}"), ("What is the name of {S}'s {child_rel}?", "{kid}")],
        temporal=["When did {S}'s {child_rel} {milestone_q}?", "When did {S}'s child reach a big milestone?"],
        para=[],
        follow=[("{kid} wants a dinosaur cake for the birthday party, so that's my weekend sorted.", "What kind of cake does {S}'s {child_rel} want?", "a dinosaur cake")]),
    "recipe": dict(slots=s_recipe, intro=[
        "I finally cooked my {elder}'s {dish} recipe {when} and it tasted just like hers.",
        "{When} I made {dish} using my {elder}'s old handwritten recipe card."],
        react=["That's so special. Save me some next time!", "Family recipes are the best."],
        detail=["It took me the whole afternoon but it was worth it.", "My kitchen was a disaster afterwards."],
        single=[("What dish did {S} make from a family recipe?", "{dish}"), ("Whose recipe did {S} cook?", "{pos} {elder}'s")],
        temporal=["When did {S} cook {dish}?", "When did {S} recreate a dish from the family?"],
        para=[("What traditional food from an older relative did {S} prepare?", "{dish}")]),
    "reno": dict(slots=s_reno, intro=[
        "We repainted the {room} {when}, it's {color} now and I'm obsessed.",
        "{When} I spent all weekend painting the {room} {color}."],
        react=["Ooh, that sounds gorgeous.", "Bold choice! I love it."],
        detail=["There's still paint in my hair.", "We went through way more tape than expected."],
        single=[("What color did {S} paint the {room}?", "{color}")],
        temporal=["When did {S} repaint the {room}?", "When did {S} give a room a makeover?"],
        para=[("How did {S} redecorate the house?", "painted the {room} {color}")]),
    "stolen": dict(slots=s_stolen, intro=[
        "Someone stole my {item} from outside {spot} {when}. I'm furious.",
        "{When} my {item} got stolen right outside {spot}. In broad daylight!"],
        react=["No! That's terrible. Did you report it?", "Ugh, people are the worst sometimes."],
        detail=["The police basically shrugged.", "I filed a report but I'm not holding my breath."],
        single=[("What was stolen from {S}?", "{pos} {item}"), ("Where was {S}'s {item} stolen?", "outside {spot}")],
        temporal=["When was {S}'s {item} stolen?", "When was {S} robbed?"],
        para=[("What theft happened to {S}?", "{pos} {item} was stolen outside {spot}")],
        follow=[("Good news: the police found my {item} at a pawn shop across town!", "Where did {S}'s stolen {item} turn up?", "a pawn shop across town")]),
    "camp": dict(slots=s_camp, intro=[
        "{When} we went camping at {park} and saw {wild} from across the lake!",
        "We camped at {park} {when}. The highlight was spotting {wild}."],
        react=["That's amazing! Were you scared?", "I'm more of a hotel person, but that sounds magical."],
        detail=["It rained the second night and the tent leaked.", "We cooked everything over the fire."],
        single=[("Where did {S} go camping?", "{park}"), ("What animal did {S} see on the camping trip?", "{wild}")],
        temporal=["When did {S} go camping at {park}?", "When did {S} sleep in a tent outdoors?"],
        para=[("What wildlife did {S} spot outdoors?", "{wild}")]),
    "climb": dict(slots=s_climb, intro=[
        "I've gotten really into bouldering, I go to the climbing gym {freq} now.",
        "Rock climbing has taken over my life. I'm at the gym {freq}."],
        react=["Your forearms must be huge by now.", "That sounds terrifying and fun."],
        detail=["My hands are covered in chalk and calluses.", "I finally sent a route I'd been stuck on for weeks."],
        single=[("How often does {S} go climbing?", "{freq}")],
        para=[("Which sport keeps {S} busy several evenings weekly?", "bouldering / rock climbing")]),
    "grand": dict(slots=s_grand, ask=[("How old is your {gp} now?", "{Age}! We threw a surprise party {when}.")],
        intro=[
        "My {gp} turned {age} {when} and the whole family threw a surprise party.",
        "{When} we celebrated my {gp}'s {age}th... well, {age} years! Everyone flew in."],
        react=["That's wonderful! What's the secret?", "Happy birthday to them!"],
        detail=["There were five generations in one photo.", "They danced more than anyone."],
        single=[("How old did {S}'s {gp} turn?", "{age}")],
        temporal=["When was {S}'s {gp}'s birthday party?", "When did {S}'s family gather for an elderly relative's celebration?"],
        para=[("Which of {S}'s elderly relatives celebrated a milestone age?", "{pos} {gp}, who turned {age}")]),
    "anniv": dict(slots=s_anniv, ask=[("How long have you and {partner} been together now?", "It was our {n} anniversary {when}! We had dinner at {rest}.")],
        intro=[
        "{When} {partner} and I celebrated our {n} anniversary with dinner at {rest}.",
        "Our {n} anniversary was {when}! {partner} booked a table at {rest}."],
        react=["Happy anniversary to you both!", "Aww, you two are goals."],
        detail=["We ordered way too much dessert.", "We ended up talking until they closed."],
        single=[("Where did {S} celebrate {pos} anniversary?", "{rest}"), ("What is the name of {S}'s partner?", "{partner}")],
        temporal=["When did {S} celebrate the anniversary with {partner}?", "When did {S} mark another year with {partner}?"],
        para=[],
        follow=[("{partner} surprised me with tickets to {city} for my birthday!", "Where is {S}'s spouse taking {obj} for {pos} birthday?", "{city}")]),
    "med": dict(slots=s_med, intro=[
        "I started meditating for {mins} minutes every morning {when}, and my anxiety is so much better.",
        "{When} I picked up a daily meditation habit, {mins} minutes before breakfast."],
        react=["I keep meaning to try that.", "That's great, do you use an app?"],
        detail=["Some days I just sit there making grocery lists in my head.", "It's weird how much it helps."],
        single=[("What does {S} do every morning?", "meditates for {mins} minutes")],
        temporal=["When did {S} start meditating?", "When did {S} begin the daily mindfulness practice?"],
        para=[("How has {S} been managing stress?", "meditating for {mins} minutes every morning")]),
    "exam": dict(slots=s_exam, ask=[("Did you hear back about that exam?", "I passed! The {exam} results came {when}.")],
        intro=[
        "I passed the {exam} exam {when}! All those weekends of studying paid off.",
        "{When} I got my results: I passed the {exam} exam!"],
        react=["Congratulations!!! I knew you would.", "That's huge, we need to celebrate."],
        detail=["I slept for twelve hours straight afterwards.", "I'm never looking at flashcards again."],
        single=[("What exam did {S} pass?", "the {exam} exam")],
        temporal=["When did {S} pass the {exam} exam?", "When did {S} get the good test results?"],
        para=[("Which professional test did {S} clear?", "the {exam} exam")]),
}

# Later, passing mentions of an event's topic (no answer in them): people keep talking about
# their dog, their new job, their city. These make the topic's words common in a chat, as in
# LoCoMo, so a question's topic word alone does not single out the evidence turn.
CHATTER = {
    "pet": ["{pet} says hi, by the way. She's asleep on my feet.", "Walking a {animal} in the rain is not as cute as it sounds.",
            "I spent way too much on {animal} toys this week.", "The {animal} hair situation in my apartment is out of control."],
    "job": ["Long day at work again, the {role} life is no joke.", "Work has been hectic, I barely had time for lunch today.",
            "My new coworkers invited me to trivia night, which was sweet."],
    "move": ["Still getting lost in {city}, I took the wrong bus twice this week.", "The weather in {city} is so different from what I'm used to.",
             "I finally hung some pictures in the new place."],
    "instr": ["My {instrument} practice is going slowly this week, too tired after work.", "I've been listening to a lot of {instrument} music for inspiration."],
    "trip": ["I'm already looking at flights for next year, that trip ruined me for normal life.", "I printed some of the travel photos for my wall."],
    "race": ["Went for an easy recovery run this morning, legs finally feel normal.", "I keep buying running socks, it's becoming a problem."],
    "sib": ["My {rel} sent me a photo of the sunset in {city}, I'm so jealous.", "Talked to {sib} for two hours on the phone last night."],
    "car": ["Finally cleaned the car, found three umbrellas in the back.", "Gas prices are wild right now, glad I'm driving less."],
    "injury": ["Physical therapy is slow, but I'm getting there.", "I can almost move normally again, fingers crossed."],
    "class": ["My {craft} teacher said my work is getting better, which made my week.", "I bought way too many supplies for {craft} class."],
    "vol": ["It was a busy shift at the {vorg} this weekend.", "We're short on volunteers again, if you know anyone."],
    "book": ["I need a new book recommendation, I'm in a reading slump.", "Book club picked a mystery this month, not my usual thing."],
    "garden": ["The garden needs weeding again, it never ends.", "I'm thinking of adding herbs to the balcony next season."],
    "biz": ["Side business paperwork is the least fun part of it.", "I spent the whole weekend packing orders."],
    "concert": ["I still have that song from the concert stuck in my head.", "Looking at ticket prices for the next tour, yikes."],
    "kid": ["{kid} has been asking a million questions a day lately.", "School drop-off was chaos this morning."],
    "recipe": ["I want to learn more of the old family recipes before they're lost.", "Made a huge batch of soup and froze half of it."],
    "reno": ["Next on the list is the hallway, but I need a break from painting.", "Home projects always take three times longer than planned."],
    "stolen": ["I bought a much heavier lock after what happened.", "I've been taking the bus since, it's not so bad."],
    "camp": ["I'm itching to go camping again before it gets cold.", "We finally dried out all the camping gear."],
    "climb": ["My fingers are so sore from the climbing gym.", "Watched a climbing documentary and now I'm even more obsessed."],
    "grand": ["Called my {gp} today, still sharper than me.", "Family group chat is still full of party photos."],
    "anniv": ["{partner} and I are trying to cook together more.", "{partner} says hi!"],
    "med": ["Skipped my morning routine today and I felt it.", "Trying to be kinder to myself lately."],
    "exam": ["Still can't believe the studying is over.", "Now I have to figure out what comes next in my career."],
}

PREFS = {
    "cuisine": dict(slots=lambda r: dict(cuisine=pick(r, ["Thai", "Ethiopian", "Korean", "Italian", "Lebanese"])), intro=[
        "Honestly nothing beats {cuisine} food, it's my comfort meal every single time.",
        "If I could only eat one cuisine forever it would be {cuisine}, no contest."],
        single=[("What cuisine does {S} like best?", "{cuisine}")], para=["Which dishes does {S} crave most?"]),
    "music": dict(slots=lambda r: dict(genre=pick(r, ["jazz", "country", "hip hop", "classical", "punk rock", "folk"])), intro=[
        "I've been blasting {genre} all week, it's always been my favourite kind of music.",
        "You know me, {genre} on repeat. Nothing else hits the same."],
        single=[("What music genre does {S} prefer?", "{genre}")], para=["What does {S} enjoy listening to?"]),
    "dislike": dict(slots=lambda r: dict(food=pick(r, ["cilantro", "olives", "mushrooms", "blue cheese", "raisins"])), intro=[
        "I can't stand {food}, it ruins any dish for me.",
        "Please no {food} on mine, I really hate the stuff."],
        single=[("What food does {S} dislike?", "{food}")], para=["Which ingredient does {S} avoid eating?"]),
    "drink": dict(slots=lambda r: dict(drink=pick(r, [("tea", "coffee"), ("coffee", "tea")])), intro=[
        "I'm a {d1} person through and through, I never touch {d2}.",
        "Morning {d1} is sacred. {d2}? No thanks."],
        single=[("Does {S} prefer coffee or tea?", "{d1}")], para=["What's {S}'s usual hot beverage?"]),
    "season": dict(slots=lambda r: dict(season=pick(r, ["autumn", "winter", "spring", "summer"])), intro=[
        "{Season} is my season, I wait for it all year.",
        "I'm happiest in {season}, it's my favourite time of year."],
        single=[("What is {S}'s favourite season?", "{season}")], para=["During which months is {S} most cheerful?"]),
    "movies": dict(slots=lambda r: dict(mgenre=pick(r, ["horror", "romantic comedy", "documentary", "sci-fi"])), intro=[
        "I'll watch any {mgenre} movie, I never get tired of them.",
        "Friday nights are for {mgenre} movies and takeout."],
        single=[("What kind of movies does {S} like?", "{mgenre}")], para=["Which film genre is {S}'s go-to?"]),
    "workout": dict(slots=lambda r: dict(wt=pick(r, ["early morning, before six", "late at night"])), intro=[
        "I always work out {wt}, otherwise it just doesn't happen.",
        "My gym time is {wt}, it's the only slot that works for me."],
        single=[("When does {S} prefer to work out?", "{wt}")], para=["At what hour does {S} like to exercise?"]),
    "author": dict(slots=lambda r: dict(fav_author=pick(r, AUTHORS)), intro=[
        "{fav_author} is my favourite writer, I've read everything she's published.",
        "Nobody writes like {fav_author}. I preorder every book."],
        single=[("Who is {S}'s favourite author?", "{fav_author}")], para=["Which novelist does {S} admire most?"]),
    "vacation": dict(slots=lambda r: dict(vac=pick(r, [("a quiet cabin in the mountains", "a beach resort"),
                                                        ("a beach resort", "a quiet cabin in the mountains")])), intro=[
        "Give me {v1} over {v2} any day.",
        "For a break I'd always pick {v1}; {v2} just isn't me."],
        single=[("What kind of vacation does {S} prefer?", "{v1}")], para=["Where would {S} rather unwind?"]),
}

SMALLTALK = [
    ("Work has been absolutely crazy this week.", "Ugh, same here. I can't wait for the weekend."),
    ("The weather has been so gloomy lately.", "I know, I haven't seen the sun in days."),
    ("Did you end up watching that show I told you about?", "Not yet! It's next on my list, I promise."),
    ("I finally caught up on sleep this weekend.", "Lucky you. I've been running on coffee and hope."),
    ("My neighbour's dog barks every time I open the door.", "Haha, at least you have a built-in alarm system."),
    ("Traffic on the way home today was brutal.", "It's been so bad since they started the roadwork."),
    ("I need a vacation so badly.", "Same. Let's plan something, even just a weekend."),
    ("My coworker brought donuts today, best Monday ever.", "Okay, I want to work at your office."),
    ("I've been trying to drink more water, it's harder than it sounds.", "I set reminders on my phone and I still forget."),
    ("Have you been cooking anything good lately?", "Mostly pasta, if I'm honest. Lots of pasta."),
    ("My phone screen cracked again.", "Oh no, you need one of those indestructible cases."),
    ("I spent the whole evening reorganizing my closet.", "That's so satisfying. I should do mine."),
    ("How's your family doing?", "They're good, thanks for asking! Everyone's busy as usual."),
    ("I tried a new coffee place downtown.", "Was it any good? I'm always looking for a new spot."),
    ("It's been so hot, I basically live in front of the fan.", "Same, I've been taking cold showers twice a day."),
    ("I've been so tired lately, I think I need a new routine.", "Maybe try going to bed a bit earlier? It helped me."),
    ("The grocery store was out of everything today.", "That's been happening a lot, so annoying."),
    ("I watched a documentary about octopuses last night.", "They're so smart, right? Kind of creepy though."),
    ("My cousin is getting married next year, so the whole family is planning already.", "Weddings bring out the drama, good luck!"),
    ("I keep meaning to start running again.", "You should! We could go together sometime."),
    ("I binged an entire season in one night, no regrets.", "Haha, that's the best kind of bad decision."),
    ("My landlord finally fixed the heater.", "Took them long enough!"),
    ("Do you have plans for the holidays?", "Not yet, probably just a quiet one at home."),
    ("I got a parking ticket today, great start to the week.", "Ugh, the worst. Those meters are a scam."),
    ("I've been trying to read more instead of scrolling at night.", "That's a good habit, I should try it too."),
    ("The concert tickets sold out in two minutes, I'm so annoyed.", "That happens every time, the resellers grab everything."),
    ("I think my houseplants are plotting against me.", "Haha, maybe they need less water?"),
    ("My friend's bakery opened a second location.", "That's great, I love seeing small places grow."),
    ("I started a puzzle with a thousand pieces and regret everything.", "Respect. I'd give up after the edges."),
    ("My brother keeps sending me memes at 3am.", "Haha, the true sign of sibling love."),
]
SMALLTALK_T = [
    ("I tried a new {food} place near {place} {day}.", "Was it any good? I'm always hunting for decent {food}."),
    ("I finally did {chore} {day}, I feel like a functioning adult.", "Haha, {chore} is the worst. Proud of you."),
    ("Have you seen {show}? I watched three episodes {day}.", "Not yet, but everyone keeps telling me to!"),
    ("I was stuck in the rain near {place} {day} without an umbrella.", "Classic. It always rains when you forget it."),
    ("I ran into an old classmate at {place} {day}.", "Small world! Did you catch up?"),
    ("Craving {food} so badly right now.", "Now you've made me hungry too, thanks a lot."),
    ("I fell asleep on the couch at nine {day}, so rock and roll.", "Honestly that sounds like a perfect evening."),
    ("My internet was down the whole evening {day}.", "Nightmare. What did you even do?"),
]
ST_SLOTS = dict(food=["ramen", "pho", "pizza", "tacos", "dumplings", "burgers", "sushi", "curry"],
                place=["work", "the station", "my gym", "the park", "the mall", "the office"],
                day=["yesterday", "on Friday", "last night", "this weekend", "on Monday"],
                show=["that new detective series", "the baking competition show", "the nature documentary everyone is talking about", "the space drama"],
                chore=["laundry", "my taxes", "the dishes", "the vacuuming", "the fridge cleanout"])


PREFIX = ["", "", "", "Oh, ", "Honestly, ", "Ha, ", "Okay so ", "Ugh, ", "Well, ", "Lol, "]
SUFFIX = ["", "", "", " Anyway.", " Just saying.", " Haha.", " You know?", " :)", " Seriously.", " Oh well."]


def vary(r, text):
    """Filler turns get an interjection and a tail now and then, as people type; it also keeps
    them from being byte-identical (Mira merges identical memories)."""
    p, s = pick(r, PREFIX), pick(r, SUFFIX)
    if p and text[:1].isupper() and not text.startswith(("I ", "I'")):
        text = text[:1].lower() + text[1:]
    return p + text + s


def smalltalk_pair(r):
    if r.random() < 0.45:
        x, y = pick(r, SMALLTALK)
        return vary(r, x), vary(r, y)
    x, y = pick(r, SMALLTALK_T)
    f = {k: pick(r, v) for k, v in ST_SLOTS.items()}
    return vary(r, fill(x, f)), vary(r, fill(y, f))


REACT = ["Wow, that's amazing!", "Haha, I love that.", "That makes total sense.", "Oh, tell me more!",
         "I'm so happy for you.", "That's wild.", "No way!", "Honestly, same.", "That sounds like a lot.",
         "You deserve it!", "I had no idea!", "That's so you, haha."]
OPEN_A = ["Hey {O}! Long time no talk. How have you been?", "Hi {O}! How's your week going?",
          "Hey {O}, got a minute to chat?", "{O}! It's been ages. What's new?", "Good morning {O}! How are things?"]
OPEN_B = ["Hey {A}! I'm good, just busy as always. You?", "Hi {A}! Doing alright. So much has happened!",
          "Always for you! What's up?", "I know, right? Life's been hectic. How about you?"]
CLOSE_A = ["Anyway, I should get going. Talk soon!", "Okay, I've got to run. Catch up again soon?",
           "This was fun, let's talk again next week.", "Alright, time for bed. Night, {O}!"]
CLOSE_B = ["Take care, {A}! Talk soon.", "Bye! Keep me posted.", "Sounds good, have a great week!", "Night! Chat soon."]

WHEN = [("yesterday", 1), ("last weekend", "we"), ("last week", 7), ("a few days ago", 3), ("two weeks ago", 14),
        ("this morning", 0), ("last Saturday", "sat"), ("on Tuesday", "tue")]
WD = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September",
          "October", "November", "December"]


def fmt_date(d):
    return f"{d.day} {MONTHS[d.month - 1]} {d.year}"


def fmt_dt(d):
    h = d.hour % 12 or 12
    return f"{h}:{d.minute:02d} {'am' if d.hour < 12 else 'pm'} on {d.day} {MONTHS[d.month - 1]}, {d.year}"


def when_answer(phrase, code, sdate):
    if code == "we":
        return f"the weekend before {fmt_date(sdate)}"
    if code == "sat":
        back = (sdate.weekday() - 5) % 7 or 7
        return fmt_date(sdate - dt.timedelta(days=back))
    if code == "tue":
        back = (sdate.weekday() - 1) % 7 or 7
        return fmt_date(sdate - dt.timedelta(days=back))
    if code == 7:
        return f"the week before {fmt_date(sdate)}"
    if code == 14:
        return f"two weeks before {fmt_date(sdate)}"
    if code == 3:
        return f"a few days before {fmt_date(sdate)}"
    return fmt_date(sdate - dt.timedelta(days=code))


def anchor(r, q, spk, date):  # noqa: ARG001 (spk kept for wording variants)
    """A quarter of single-hop and preference questions name the day it was said, as many
    LoCoMo questions do ("What exciting news did Maria share on 16 June, 2023?")."""
    if r.random() >= 0.25:
        return q
    day = f"{date.day} {MONTHS[date.month - 1]}, {date.year}"
    return q.rstrip("?") + pick(r, [f", as mentioned on {day}?", f" (said on {day})?", f", according to the chat on {day}?"])


class Fmt(dict):
    def __missing__(self, k):
        if k[:1].isupper() and k.lower() in self:
            v = self[k.lower()]
            return v[:1].upper() + v[1:]
        raise KeyError(k)


def fill(t, f):
    out = t.format_map(f)
    return out[:1].upper() + out[1:]


# ----------------------------------------------------------------------------- build
def later_session(r, sessions, s):
    """The least busy of three random sessions after s (keeps sessions near 15-25 turns)."""
    cands = [r.randrange(s + 1, len(sessions)) for _ in range(3)]
    return min(cands, key=lambda i: sum(len(b) for b in sessions[i]))


def build_conv(r, idx, used_names):
    names = [n for n in FIRST if n not in used_names]
    a, b = r.sample(names, 2)
    used_names.update([a, b])
    pron = {a: pick(r, [("she", "her", "her"), ("he", "his", "him")]), b: pick(r, [("she", "her", "her"), ("he", "his", "him")])}
    n_sessions = r.randint(15, 25)
    start = dt.datetime(2023, 1, 1) + dt.timedelta(days=r.randrange(0, 500), hours=r.randrange(8, 22), minutes=r.randrange(60))
    dates = []
    d = start
    for _ in range(n_sessions):
        dates.append(d)
        d = d + dt.timedelta(days=r.randint(3, 21), hours=r.randint(-5, 5), minutes=r.randrange(60))
        if d.hour < 8 or d.hour > 22:
            d = d.replace(hour=r.randint(9, 21))

    # schedule: each speaker gets 9-11 events (kinds may coincide across speakers) and 4-5 preferences
    items = []  # (session, kind, speaker, ('event'|'pref'|'follow'), payload)
    for spk in (a, b):
        kinds = r.sample(sorted(EVENTS), r.randint(9, 11))
        for k in kinds:
            ev = EVENTS[k]
            s = r.randrange(0, n_sessions - 2)
            items.append([s, spk, "event", k, ev["slots"](r)])
        for k in r.sample(sorted(PREFS), r.randint(4, 5)):
            items.append([r.randrange(0, n_sessions), spk, "pref", k, PREFS[k]["slots"](r)])

    sessions = [[] for _ in range(n_sessions)]  # lists of blocks
    qa = []
    pending_q = []  # questions resolved after dia ids are known: (category, q, answer, [turn refs])

    def fmtmap(spk, slots):
        other = b if spk == a else a
        sp, pos, obj = pron[spk]
        f = Fmt(slots)
        f.update(S=spk, O=other, sp=sp, pos=pos, obj=obj)
        if "sp2" in slots:
            f["sp2_l"] = slots["sp2"].lower()
        if "drink" in slots:
            f["d1"], f["d2"] = slots["drink"]
        if "vac" in slots:
            f["v1"], f["v2"] = slots["vac"]
        return f

    for s, spk, typ, k, slots in items:
        other = b if spk == a else a
        if typ == "pref":
            p = PREFS[k]
            f = fmtmap(spk, slots)
            intro = fill(pick(r, p["intro"]), f)
            ref = {"text": intro}
            block = [(spk, ref), (other, {"text": vary(r, pick(r, REACT))})]
            sessions[s].append(block)
            q, ans = pick(r, p["single"])
            pending_q.append(("preference", anchor(r, fill(q, f), spk, dates[s]), ans.format_map(f), [ref]))
            pq = [fill(x, f) for x in p["para"]]
            pq = [x for x in pq if not (content(x, (a, b)) & content(intro, (a, b)))]
            if pq and r.random() < 0.6:
                pending_q.append(("paraphrase", pick(r, pq), ans.format_map(f), [ref]))
            continue
        ev = EVENTS[k]
        f = fmtmap(spk, slots)
        intros = ev["intro"]
        phrase, code = pick(r, WHEN)
        f["when"] = phrase
        if ev.get("ask") and r.random() < 0.4:
            # LoCoMo-style: the other speaker asks (with the topic's words), the answer turn
            # carries the fact and is the evidence, often without the topic's words
            ask, tmpl = pick(r, ev["ask"])
            intro = fill(tmpl, f)
            ref = {"text": intro}
            block = [(other, {"text": fill(ask, f)}), (spk, ref)]
        else:
            tmpl = pick(r, intros)
            intro = fill(tmpl, f)
            ref = {"text": intro}
            block = [(spk, ref), (other, {"text": vary(r, fill(pick(r, ev["react"]), f))})]
        has_when = "{when}" in tmpl or "{When}" in tmpl
        if r.random() < 0.7:
            block.append((spk, {"text": vary(r, fill(pick(r, ev["detail"]), f))}))
        if r.random() < 0.3:
            block.append((other, {"text": vary(r, pick(r, REACT))}))
        sessions[s].append(block)
        singles = ev["single"][:]
        r.shuffle(singles)
        for q, ans in singles[: 1 if r.random() < 0.5 else 2]:
            pending_q.append(("single_hop", anchor(r, fill(q, f), spk, dates[s]), ans.format_map(f), [ref]))
        if has_when and ev.get("temporal"):
            pending_q.append(("temporal", fill(pick(r, ev["temporal"]), f), when_answer(phrase, code, dates[s]), [ref]))
        pq = [(fill(x, f), y.format_map(f)) for x, y in ev.get("para", [])]
        pq = [x for x in pq if not (content(x[0], (a, b)) & content(intro, (a, b)))]
        if pq:
            pq, pa = pick(r, pq)
            pending_q.append(("paraphrase", pq, pa, [ref]))
        for line in r.sample(CHATTER[k], min(len(CHATTER[k]), r.randint(1, 3))):
            if s + 1 < n_sessions:
                cs = later_session(r, sessions, s)
                sessions[cs].append([(spk, {"text": vary(r, fill(line, f))}), (other, {"text": vary(r, pick(r, REACT))})])
        if ev.get("follow") and r.random() < 0.85:
            ftxt, fq, fans = pick(r, ev["follow"])
            fs = later_session(r, sessions, s)
            fref = {"text": fill(ftxt, f)}
            sessions[fs].append([(spk, fref), (other, {"text": vary(r, pick(r, REACT))})])
            pending_q.append(("multi_hop", fill(fq, f), fans.format_map(f), [ref, fref]))

    # lay out sessions: opener, blocks interleaved with small talk, closer; 15-25 turns
    conv_sessions = []
    for si in range(n_sessions):
        first, second = (a, b) if r.random() < 0.5 else (b, a)
        f = Fmt(O=second, A=first)
        turns = [(first, {"text": vary(r, fill(pick(r, OPEN_A), f))}), (second, {"text": vary(r, fill(pick(r, OPEN_B), f))})]
        blocks = sessions[si][:]
        r.shuffle(blocks)
        target = r.randint(15, 25)
        used_small = 0
        body = []
        for blk in blocks:
            body.extend(blk)
        # insert small-talk pairs at random block boundaries until the target is reached
        chunks = [blk for blk in blocks]
        seen = set()
        while sum(len(c) for c in chunks) + 4 < target and used_small < 40:
            x, y = smalltalk_pair(r)
            used_small += 1
            if x in seen:
                continue
            seen.add(x)
            p1 = first if r.random() < 0.5 else second
            p2 = second if p1 == first else first
            pos = r.randrange(len(chunks) + 1)
            chunks.insert(pos, [(p1, {"text": x}), (p2, {"text": y})])
        for c in chunks:
            turns.extend(c)
        turns.append((first, {"text": vary(r, fill(pick(r, CLOSE_A), f))}))
        turns.append((second, {"text": vary(r, fill(pick(r, CLOSE_B), f))}))
        out = []
        for ti, (spk, ref) in enumerate(turns, 1):
            ref["dia_id"] = f"D{si + 1}:{ti}"
            out.append({"dia_id": ref["dia_id"], "speaker": spk, "text": ref["text"]})
        conv_sessions.append({"session": si + 1, "date_time": fmt_dt(dates[si]), "turns": out})

    for cat, q, ans, refs in pending_q:
        qa.append({"question": q, "answer": ans, "evidence": [x["dia_id"] for x in refs], "category": cat})
    r.shuffle(qa)
    return {"sample_id": f"dev-{idx}", "speaker_a": a, "speaker_b": b, "sessions": conv_sessions, "qa": qa}


def main():
    r = random.Random(SEED)
    used = set()
    convs = [build_conv(r, i, used) for i in range(N_CONVS)]
    out = HERE / "dev.jsonl"
    with open(out, "w") as fh:
        for c in convs:
            fh.write(json.dumps(c, ensure_ascii=False) + "\n")
    # shape + lexical overlap (content words shared by question and its first evidence turn)
    cats = Counter()
    overlap = Counter()
    turns = sessions = 0
    for c in convs:
        names = (c["speaker_a"], c["speaker_b"])
        text = {t["dia_id"]: t["text"] for s in c["sessions"] for t in s["turns"]}
        sessions += len(c["sessions"])
        turns += len(text)
        for q in c["qa"]:
            cats[q["category"]] += 1
            if content(q["question"], names) & content(text[q["evidence"][0]], names):
                overlap[q["category"]] += 1
            if q["category"] == "paraphrase":
                assert not (content(q["question"], names) & content(text[q["evidence"][0]], names)), q
    print(f"wrote {out}: {len(convs)} conversations, {sessions} sessions, {turns} turns, {sum(cats.values())} questions",
          file=sys.stderr)
    for k in ("single_hop", "multi_hop", "temporal", "preference", "paraphrase"):
        print(f"  {k:11s} {cats[k]:4d} questions, {overlap[k] / max(1, cats[k]):.0%} share a content word with the (first) evidence turn",
              file=sys.stderr)


if __name__ == "__main__":
    main()
